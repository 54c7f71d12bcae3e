import { useEffect, useState } from 'preact/hooks';
import { CheckIcon, CopyIcon } from './icons.js';

/** Writes text to the clipboard; falls back to a hidden textarea where the async API is refused. */
export async function copyText(text: string): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    const area = document.createElement('textarea');
    area.value = text;
    area.setAttribute('readonly', '');
    area.className = 'offscreen';
    document.body.append(area);
    area.select();
    try {
      return document.execCommand('copy');
    } catch {
      return false;
    } finally {
      area.remove();
    }
  }
}

export function CopyButton(props: {
  text: string;
  label: string;
  copiedLabel?: string;
  class?: string;
  onCopy?: () => void;
  testId?: string;
  /** Accessible name when the visible label may be hidden (icon-only on phones). */
  ariaLabel?: string;
  /** Nothing to copy yet (the text is loading). */
  disabled?: boolean;
}) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  useEffect(() => {
    if (state === 'idle') return;
    const timer = setTimeout(() => setState('idle'), 2000);
    return () => clearTimeout(timer);
  }, [state]);
  const onClick = async () => {
    // Tracking first and detached: it must never wait on, or block, the copy itself.
    props.onCopy?.();
    setState((await copyText(props.text)) ? 'copied' : 'failed');
  };
  return (
    <button
      type="button"
      class={props.class ?? 'button'}
      onClick={onClick}
      data-testid={props.testId}
      data-state={state}
      aria-label={props.ariaLabel}
      disabled={props.disabled}
    >
      {state === 'copied' ? <CheckIcon /> : <CopyIcon />}
      <span class="button-label">
        {state === 'copied'
          ? (props.copiedLabel ?? 'Copied')
          : state === 'failed'
            ? 'Copy failed'
            : props.label}
      </span>
      <span class="visually-hidden" aria-live="polite">
        {state === 'copied' ? 'Copied to clipboard' : state === 'failed' ? 'Could not copy' : ''}
      </span>
    </button>
  );
}
