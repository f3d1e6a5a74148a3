/**
 * The study-job methods of `createHandlers` (studyJobs.ts): each delegates to the host after the
 * payload was validated (contract.ts), or answers UNAVAILABLE where the host cannot run them.
 */
import type { ApiMethod } from './channels.ts';
import { ApiError } from './errors.ts';
import type { LabHost } from './lab.ts';
import type { CancelStudyPayload, StartStudyRequest } from './studyJobs.ts';

/** `listStudyPlans`, `startStudy`, `cancelStudy` over `lab(method)`, the handlers' host lookup. */
export function studyJobHandlers(lab: (method: ApiMethod) => LabHost) {
  const host = <M extends 'listStudyPlans' | 'startStudy' | 'cancelStudy'>(m: M): NonNullable<LabHost[M]> => {
    const h = lab(m);
    const f = h[m];
    if (!f) throw new ApiError('UNAVAILABLE', `${m}: this host cannot run studies`, m);
    return f.bind(h) as NonNullable<LabHost[M]>;
  };
  return {
    listStudyPlans: async () => host('listStudyPlans')(),
    startStudy: async (payload: StartStudyRequest) => host('startStudy')(payload),
    cancelStudy: async (payload: CancelStudyPayload) => host('cancelStudy')(payload),
  };
}
