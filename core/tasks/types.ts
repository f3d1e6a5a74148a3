/**
 * The shapes every dataset and grader shares. Plain data: a task is what a workflow is run on,
 * a grade is how right its answer was.
 */

/** One problem of a dataset split. */
export interface Task {
  /** Stable id, `<dataset>/<split>/<index>` (e.g. `gsm8k/test/0`). Used as the task key of runs. */
  id: string;
  /** 0-based position of the task in its split (the n-th record of the file). */
  index: number;
  /** What the workflow sees, by port name (GSM8K: `{question}`). */
  input: Record<string, unknown>;
  /** The gold final answer as text (GSM8K: the number after `####`, commas removed, e.g. `"1000"`). */
  expected: string;
  /**
   * Extra facts about the task (GSM8K: `{split, line, solution}` where `solution` is the worked
   * gold solution). Never shown to the solving roles: it may contain the answer.
   */
  meta?: Record<string, unknown>;
}

/** The result of grading one answer against one task. */
export interface Grade {
  /** How right the answer is, 0..1 (GSM8K: 1 or 0). */
  score: number;
  correct: boolean;
  /** What was read from the model's answer (canonical text, e.g. `"1000"`), or null when nothing could be read. */
  extracted: string | null;
  /** The task's gold answer, copied from `Task.expected`. */
  expected: string;
  /** A human sentence on how the answer was read and why it scored as it did. */
  reason?: string;
}

/**
 * Scores an answer for a task. Deterministic; never throws on a bad answer (it scores 0).
 * A grader that runs code (HumanEval, MBPP: core/tasks/code.ts) answers asynchronously.
 */
export interface Grader {
  /**
   * @param answer the workflow's final answer: a number, a string, or an object with an
   *   `answer` field (the answer node's output).
   */
  grade(answer: unknown, task: Task): Grade | Promise<Grade>;
}

/** A grader that answers at once (pure): GSM8K, the procedural families. */
export interface SyncGrader extends Grader {
  grade(answer: unknown, task: Task): Grade;
}

/** Options of `Dataset.load`. */
export interface LoadOptions {
  /** One of `Dataset.splits`. */
  split: string;
  /** Most tasks to return (a non-negative integer). Default: all. */
  limit?: number;
  /** Tasks to skip from the start of the split (a non-negative integer). Default 0. */
  offset?: number;
}

/** A named collection of tasks with its grader. */
export interface Dataset {
  name: string;
  /** Valid split names, e.g. `['test', 'train']`. */
  splits: string[];
  /**
   * Reads tasks `offset .. offset+limit-1` of a split, in file order.
   * @throws DatasetError `UNKNOWN_SPLIT`, `BAD_OPTIONS`, `DATASET_NOT_FOUND`, `BAD_LINE`.
   */
  load(opts: LoadOptions): Task[];
  grader: Grader;
  /**
   * A task's class, for accuracy per class (e.g. `learn-design`: the tool its request needs,
   * `weather`). Absent: the dataset has no classes.
   */
  classOf?: (task: Pick<Task, 'expected'>) => string;
  /**
   * What each split holds that training does not (unseen names/numbers, unseen templates or
   * wordings, unseen classes), by split name; tasks of a split with both parts say which in
   * `meta.novelty` (`in-template` | `new-wording`), and held-out reports split accuracy by it
   * (issue 24). Absent: not stated (file datasets).
   */
  novelty?: Record<string, string>;
}
