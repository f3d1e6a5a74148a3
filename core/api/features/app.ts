/**
 * The app feature: what the running app is (its version, database file and models folder).
 */
import type { Store } from '../../store/index.ts';
import { defineFeature } from '../feature.ts';
import { NoPayload } from '../fields.ts';

/** What the running app is. */
export interface AppInfo {
  /** The app's version (package.json `version`). */
  version: string;
  /** The SQLite database file in use (`:memory:` in tests). */
  dbFile: string;
  /** The folder the lab lists models from and downloads them into, when the host says (absolute). */
  modelDir?: string;
}

/** The app method (synchronous on the host). */
export interface AppApi {
  /** The app version and database file. */
  appInfo(payload?: Record<string, never>): AppInfo;
}

export const appFeature = defineFeature<AppApi>()({
  name: 'app',
  payloads: { appInfo: NoPayload },
  handlers: (deps: { store: Store; version: string; modelDir?: string | undefined }) => ({
    appInfo: () => ({ version: deps.version, dbFile: deps.store.file, ...(deps.modelDir !== undefined ? { modelDir: deps.modelDir } : {}) }),
  }),
});
