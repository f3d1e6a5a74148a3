/** The provider conformance suite (`models/testing/providerConformance.ts`) against node-llama-cpp with the tiny real model. */
import { existsSync } from 'node:fs';
import { tinyModel } from '../../test/cli.ts';
import { describeProviderConformance } from '../testing/providerConformance.ts';
import { LlamaProvider } from './index.ts';

describeProviderConformance(
  'llama (stories260K)',
  () => new LlamaProvider({ models: { default: { path: tinyModel } }, defaults: { threads: 1, contextSize: 1024 } }),
  {
    skip: existsSync(tinyModel) ? false : `${tinyModel} not found (set FLOWLAB_SHARED to the shared folder)`,
    loadsModels: true,
    abortsMidCall: true,
    unknownRefCode: 'MODEL_UNKNOWN_REF',
    withModelFile: (file) => new LlamaProvider({ models: { default: { path: file } } }),
  },
);
