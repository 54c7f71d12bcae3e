import type { OtlpReceiver, ReceivedSpan } from './otlp-receiver.js';
import { until } from './until.js';

/**
 * The spans of trace `traceId` the receiver holds once `enough` accepts them. `flush` (the tracing
 * SDK's) is called before each look, since spans reach the receiver in batches.
 */
export async function spansOfTrace(
  receiver: OtlpReceiver,
  traceId: string,
  enough: (spans: ReceivedSpan[]) => boolean,
  flush: () => Promise<void> = async () => {},
): Promise<ReceivedSpan[]> {
  let spans: ReceivedSpan[] = [];
  try {
    return await until(
      async () => {
        await flush();
        spans = receiver.spans.filter((s) => s.traceId === traceId);
        return enough(spans) && spans;
      },
      `trace ${traceId}`,
      20_000,
    );
  } catch {
    throw new Error(`trace ${traceId} incomplete: ${JSON.stringify(spans)}`);
  }
}
