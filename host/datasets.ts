import type { DatasetInfo } from '../core/api/index.ts';
import { datasetBytes, datasetNames, datasetSource, describeDataset, fetchDatasetCommand, getDataset, resolveDataDir, type DatasetLocation } from '../core/tasks/index.ts';
import { errorMessage } from '../core/errors.ts';

/**
 * Every dataset of the core/tasks registry, with `available` found by loading one task of its
 * first split from `location` (the data folder, or `<shared>/data`). When it is not available,
 * `message` is the dataset's own error (it names the file it looked for) and `get` says how to
 * fetch it (core/tasks/downloads.ts: the command, the folder it goes to, size, licence, source).
 */
export function listDatasets(location: DatasetLocation): DatasetInfo[] {
  return datasetNames().map((name) => {
    const dataset = getDataset(name, location);
    const info: DatasetInfo = { name: dataset.name, splits: [...dataset.splits], describe: describeDataset(name) ?? name, available: true };
    try {
      dataset.load({ split: dataset.splits[0]!, limit: 1 });
    } catch (err) {
      info.available = false;
      info.message = errorMessage(err);
      const source = datasetSource(name);
      if (source) info.get = { command: fetchDatasetCommand(name), folder: resolveDataDir(location), bytes: datasetBytes(source), licence: source.licence, source: source.source };
    }
    return info;
  });
}
