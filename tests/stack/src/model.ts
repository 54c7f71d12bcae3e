import { refineEachTitle, startModelStandIn } from '@pkgreg/testing';

// The model the worker's planner refines titles with (MODEL_BASE_URL): @pkgreg/testing's stand-in, whose
// answer waits `delayMs`, which keeps an invoke running in the worker long enough for a test to kill or
// stop the worker while the job is in flight.

export interface ModelServer {
  /** The base URL to give as MODEL_BASE_URL (…/v1). */
  url: string;
  /** Requests answered or waiting so far. */
  readonly requests: number;
  /** Requests waiting for their answer now: each is a worker job in flight. */
  readonly waiting: number;
  setDelay(ms: number): void;
  close(): Promise<void>;
}

export async function startModelServer(delayMs = 0): Promise<ModelServer> {
  const delayed = (ms: number) => (titles: string[]) => ({ ...refineEachTitle(titles), delayMs: ms });
  const model = await startModelStandIn(delayed(delayMs));
  return {
    url: model.url,
    get requests() {
      return model.requests.length;
    },
    get waiting() {
      return model.waiting;
    },
    setDelay(ms) {
      model.answer(delayed(ms));
    },
    close: () => model.close(),
  };
}
