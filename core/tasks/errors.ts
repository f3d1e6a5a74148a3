import { WhereError } from '../errors.ts';

/** Stable codes for dataset failures; tests assert these, people read the message. */
export type DatasetErrorCode =
  | 'DATASET_NOT_FOUND' // the dataset's file is not where we looked
  | 'BAD_LINE' // a record cannot be read (bad JSON, missing field, no final answer)
  | 'EMPTY_FILE' // the dataset's file holds no records at all
  | 'NOT_UTF8' // the dataset's file is not UTF-8 text (where: file:line of the first bad byte)
  | 'UNKNOWN_SPLIT' // the split is not one of the dataset's
  | 'UNKNOWN_DATASET' // no dataset of that name
  | 'BAD_OPTIONS' // limit/offset are not non-negative integers
  | 'NO_SANDBOX'; // a code dataset is graded without a code sandbox (DatasetLocation.sandbox)

/**
 * A dataset error. `where` names the place concerned: a file path, or `file:line` (1-based line)
 * for a bad record. The message is complete on its own (it repeats `where`).
 */
export class DatasetError extends WhereError<DatasetErrorCode> {
  override readonly name = 'DatasetError';
}
