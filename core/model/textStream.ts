/**
 * A completion's text handed to a `GenerateRequest.onText` hook (provider.ts) so that the pieces
 * add up to the text the call returns, whatever the runtime does at the end: trailing whitespace
 * is held back until more text follows (a runtime may trim it from the final text, as
 * node-llama-cpp does under a JSON-schema grammar), and `end(final)` sends what `final` has
 * beyond what was sent. A provider that cannot stream calls `end(text)` alone: one piece.
 */

/** The two calls a provider makes: each decoded piece, then the call's final raw text. */
export interface TextStream {
  push(piece: string): void;
  /** Sends the rest of `final` (all of it when nothing was pushed); later pushes are dropped. */
  end(final: string): void;
  /** The text sent to the hook so far. */
  readonly sent: string;
}

/**
 * A stream into `onText`. The hook's exceptions are swallowed (a hook that throws must not stop
 * a generation). When `final` does not start with the text already sent (a runtime whose final
 * text disagrees with its pieces), nothing more is sent.
 */
export function textStream(onText: (chunk: string) => void): TextStream {
  let sent = '';
  let held = '';
  let ended = false;
  const emit = (piece: string) => {
    if (piece === '') return;
    sent += piece;
    try {
      onText(piece);
    } catch {
      /* the hook's failure is the caller's; generation goes on */
    }
  };
  return {
    push(piece) {
      if (ended || piece === '') return;
      const text = held + piece;
      const body = text.trimEnd();
      held = text.slice(body.length);
      emit(body);
    },
    end(final) {
      if (ended) return;
      ended = true;
      if (final.startsWith(sent)) emit(final.slice(sent.length));
    },
    get sent() {
      return sent;
    },
  };
}
