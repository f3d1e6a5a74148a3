import { API_METHODS, ApiError, channelOf, toApiError, type FlowlabApi } from '../core/api/index.ts';

/**
 * The part of Electron's `ipcMain` that `registerIpc` uses. Taken as a parameter (not imported)
 * so tests can pass a fake; Electron's `ipcMain` satisfies it.
 */
export interface IpcMainLike {
  handle(channel: string, listener: (event: IpcInvokeEventLike, ...args: unknown[]) => unknown): void;
  removeHandler(channel: string): void;
}

/** The part of Electron's `IpcMainInvokeEvent` that the sender check looks at. */
export interface IpcInvokeEventLike {
  /** The frame that sent the call; null when it navigated away or was destroyed. */
  senderFrame?: { url: string } | null;
}

/** Options of `registerIpc`. */
export interface RegisterIpcOptions {
  /**
   * Decides whether a call comes from our own renderer (checked on every call, before the
   * payload is looked at). Default: every sender is trusted; main passes a real check.
   */
  isTrustedSender?: (event: IpcInvokeEventLike) => boolean;
  /** Called with each failed call's ApiError (for logging in main). Default: nothing. */
  onError?: (error: ApiError, channel: string) => void;
}

/**
 * Registers one `ipcMain.handle` listener per allowlisted API method (and none for anything
 * else the `handlers` object may carry). Each listener passes the renderer's payload, as is, to
 * the handler, which validates it. A failing call rejects with an Error whose message is the
 * ApiError's wire form (`<message> [<CODE>]`, see `ApiError.toWire`), because Electron keeps
 * only the message across IPC. Returns a function that removes the listeners again.
 *
 * Store reads run in main; the lab methods' handlers relay to the utility process (relay.ts), so
 * model inference and experiments never run on main's thread (they run in the utility process, electron/worker.ts).
 */
export function registerIpc(ipcMain: IpcMainLike, handlers: FlowlabApi, options: RegisterIpcOptions = {}): () => void {
  const trusted = options.isTrustedSender ?? (() => true);
  const channels: string[] = [];
  for (const method of API_METHODS) {
    const channel = channelOf(method);
    const handler = handlers[method] as (payload: unknown) => unknown;
    ipcMain.handle(channel, async (event, payload) => {
      try {
        if (!trusted(event)) {
          throw new ApiError('FORBIDDEN', `${method}: calls from ${event.senderFrame?.url ?? 'an unknown frame'} are not allowed`, method);
        }
        return await handler.call(handlers, payload);
      } catch (err) {
        const apiError = toApiError(err, method);
        options.onError?.(apiError, channel);
        throw new Error(apiError.toWire(), { cause: apiError });
      }
    });
    channels.push(channel);
  }
  return () => {
    for (const channel of channels.splice(0)) ipcMain.removeHandler(channel);
  };
}
