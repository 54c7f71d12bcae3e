import type { TrackResponse } from '@pkgreg/contracts';

// The one success body, encoded once (res.json would stringify and measure it on every call).
export const TRACK_OK = Buffer.from(JSON.stringify({ ok: true } satisfies TrackResponse));
export const TRACK_OK_LENGTH = String(TRACK_OK.length);
