import type { IncomingMessage } from 'node:http';
import { dependencyOutageOf, type Logger, outageMonitorOf } from '@pkgreg/server-kit';
import { ApiError } from '../http/api-error.js';
import type { WindowLimiter, WindowVerdict } from '../http/window-limiter.js';
import { clientAddress, type TrustProxy } from './client-address.js';
import type { Downloader, DownloaderIds } from './downloaders.js';

export interface TrackAdmission {
  /**
   * The downloader behind `req` when its address is within TRACK_PER_MINUTE; throws (or rejects with)
   * the 429 past it. At once when the day's key and the address's window are at hand. Undefined when
   * the day's key could not be read (PostgreSQL away): the call goes on to the recorder, which answers
   * the outage as before, or counts it in downloadCount alone should PostgreSQL be back.
   */
  admit(req: IncomingMessage): Downloader | undefined | Promise<Downloader | undefined>;
}

export interface TrackAdmissionDeps {
  ids: DownloaderIds;
  /** Windows keyed by the downloader's digest: the address never reaches Redis. */
  limiter: WindowLimiter;
  trust: TrustProxy;
  logger: Logger;
}

/**
 * Who a track call is from, and whether that address may count another download now. The limit is
 * per address (IPv6: per /64, as the downloader is), over every package; a call past it is answered
 * 429 with Retry-After and counts nothing. Counting never waits on Redis: while it is away the limit
 * is not checked for addresses this process has not judged yet (the outage is logged once), as track
 * needed no Redis before it had a limit.
 */
export function createTrackAdmission(deps: TrackAdmissionDeps): TrackAdmission {
  const outages = outageMonitorOf(deps.logger);

  const judged = (downloader: Downloader, verdict: WindowVerdict): Downloader => {
    if (verdict.allowed) return downloader;
    const seconds = verdict.retryAfterSeconds;
    throw new ApiError(
      'too_many_requests',
      `Too many downloads from this address; try again in ${seconds} s`,
      {
        headers: { 'Retry-After': String(seconds) },
      },
    );
  };

  const withinLimit = (downloader: Downloader): Downloader | Promise<Downloader> => {
    const verdict = deps.limiter.take(downloader.digest);
    if (!(verdict instanceof Promise)) return judged(downloader, verdict);
    return verdict.then(
      (v) => judged(downloader, v),
      (error: unknown) => {
        if (!outages.failed(error)) deps.logger.warn({ err: error }, 'track limit not checked');
        return downloader;
      },
    );
  };

  const withoutKey = (error: unknown): undefined => {
    if (!dependencyOutageOf(error)) deps.logger.warn({ err: error }, 'download day key not read');
    return undefined;
  };

  return {
    admit(req) {
      const downloader = deps.ids.of(clientAddress(req, deps.trust));
      if (!(downloader instanceof Promise)) return withinLimit(downloader);
      return downloader.then(withinLimit, withoutKey);
    },
  };
}
