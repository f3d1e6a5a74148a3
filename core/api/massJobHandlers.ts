/**
 * The MASS job methods of `createHandlers` (massJobs.ts): each delegates to the host after the
 * payload was validated (contract.ts), or answers UNAVAILABLE where the host cannot run them.
 */
import type { ApiMethod } from './channels.ts';
import { ApiError } from './errors.ts';
import type { LabHost } from './lab.ts';
import type { CancelMassPayload, StartEvolveRequest, StartRankRequest, StartRsiRequest } from './massJobs.ts';

/** `startEvolve`, `startRank`, `startRsi`, `cancelMass` over `lab(method)`, the handlers' host lookup. */
export function massJobHandlers(lab: (method: ApiMethod) => LabHost) {
  const host = <M extends 'startEvolve' | 'startRank' | 'startRsi' | 'cancelMass'>(m: M): NonNullable<LabHost[M]> => {
    const h = lab(m);
    const f = h[m];
    if (!f) throw new ApiError('UNAVAILABLE', `${m}: this host cannot run MASS jobs`, m);
    return f.bind(h) as NonNullable<LabHost[M]>;
  };
  return {
    startEvolve: async (payload: StartEvolveRequest) => host('startEvolve')(payload),
    startRank: async (payload: StartRankRequest) => host('startRank')(payload),
    startRsi: async (payload: StartRsiRequest) => host('startRsi')(payload),
    cancelMass: async (payload: CancelMassPayload) => host('cancelMass')(payload),
  };
}
