import type { IncomingMessage } from 'node:http';
import { dependencyOutageOf, type Logger, outageMonitorOf } from '@pkgreg/server-kit';
import { ApiError } from '../http/api-error.js';
import type { WindowLimiter } from '../http/window-limiter.js';
import { clientAddress, type TrustProxy } from './client-address.js';
import type { Downloader, DownloaderIds } from './downloaders.js';

/** A track call's downloader, and its check against the per-address limit. */
export interface Admitted {
  /**
   * Undefined when the day's key could not be read (PostgreSQL away): the call goes on to the recorder,
   * which answers the outage as before, or counts it in downloadCount alone should PostgreSQL be back.
   */
  downloader: Downloader | undefined;
  /** Resolves when the address is within TRACK_PER_MINUTE; rejects with the 429 past it. */
  check: Promise<void> | undefined;
}

export interface TrackAdmission {
  /** Synchronous once the day's key is at hand; the check runs while the call waits for its batch. */
  admit(req: IncomingMessage): Admitted | Promise<Admitted>;
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
 * is not checked (the outage is logged once), as track needed no Redis before it had a limit.
 */
export function createTrackAdmission(deps: TrackAdmissionDeps): TrackAdmission {
  const outages = outageMonitorOf(deps.logger);

  const check = (downloader: Downloader): Promise<void> =>
    deps.limiter.take(downloader.digest).then(
      (verdict) => {
        if (verdict.allowed) return;
        const seconds = verdict.retryAfterSeconds;
        throw new ApiError(
          'too_many_requests',
          `Too many downloads from this address; try again in ${seconds} s`,
          { headers: { 'Retry-After': String(seconds) } },
        );
      },
      (error: unknown) => {
        if (!outages.failed(error)) deps.logger.warn({ err: error }, 'track limit not checked');
      },
    );

  const admitted = (downloader: Downloader): Admitted => ({ downloader, check: check(downloader) });

  const withoutKey = (error: unknown): Admitted => {
    if (!dependencyOutageOf(error)) deps.logger.warn({ err: error }, 'download day key not read');
    return { downloader: undefined, check: undefined };
  };

  return {
    admit(req) {
      const downloader = deps.ids.of(clientAddress(req, deps.trust));
      if (!(downloader instanceof Promise)) return admitted(downloader);
      return downloader.then(admitted, withoutKey);
    },
  };
}
