import type { IncomingMessage } from 'node:http';
import type { TrackResponse } from '@pkgreg/contracts';

// The one success body, encoded once (res.json would stringify and measure it on every call).
export const TRACK_OK = Buffer.from(JSON.stringify({ ok: true } satisfies TrackResponse));
export const TRACK_OK_LENGTH = String(TRACK_OK.length);

/**
 * What a track call recorded by the request listener's fast lane (http/fast-lane.ts) came to when it
 * hands the request on to Express (a 404 or an error): the track route answers from it instead of
 * recording the call a second time.
 */
export const TRACK_OUTCOME = Symbol('pkgreg.trackOutcome');
export type TrackOutcome = { counted: false } | { error: unknown };
export type WithTrackOutcome = IncomingMessage & { [TRACK_OUTCOME]?: TrackOutcome };
