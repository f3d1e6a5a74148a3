/**
 * The download methods of `createHandlers` (downloads.ts): each delegates to the host after the
 * payload was validated (contract.ts), or answers UNAVAILABLE where the host cannot download.
 */
import type { ApiMethod } from './channels.ts';
import type { CancelDownloadPayload, StartDownloadRequest } from './downloads.ts';
import { ApiError } from './errors.ts';
import type { LabHost } from './lab.ts';

/** `startDownload`, `cancelDownload` over `lab(method)`, the handlers' host lookup. */
export function downloadHandlers(lab: (method: ApiMethod) => LabHost) {
  const host = <M extends 'startDownload' | 'cancelDownload'>(m: M): NonNullable<LabHost[M]> => {
    const h = lab(m);
    const f = h[m];
    if (!f) throw new ApiError('UNAVAILABLE', `${m}: this host cannot download models`, m);
    return f.bind(h) as NonNullable<LabHost[M]>;
  };
  return {
    startDownload: async (payload: StartDownloadRequest) => host('startDownload')(payload),
    cancelDownload: async (payload: CancelDownloadPayload) => host('cancelDownload')(payload),
  };
}
