import { ANNOTATIONS_SQL } from './annotations.ts';
import { ENDPOINT_DECISIONS_SQL } from './endpointDecisions.ts';
import type { Database } from 'better-sqlite3';
import { runSearchMigration } from './runSearch.ts';

/**
 * One schema step. Versions are consecutive integers from 1 and never change once released:
 * a change to the schema is a new migration appended to `MIGRATIONS`, never an edit of an old one.
 */
export interface Migration {
  version: number;
  name: string;
  /** SQL text run with `db.exec`, or a function for data migrations. Runs inside the migration's transaction. */
  up: string | ((db: Database) => void);
}

const INITIAL = /* sql */ `
CREATE TABLE experiments (
  id            TEXT PRIMARY KEY,
  created_at    INTEGER NOT NULL,            -- epoch ms
  updated_at    INTEGER NOT NULL,            -- epoch ms
  finished_at   INTEGER,                     -- epoch ms, set by finishExperiment
  kind          TEXT NOT NULL,               -- 'run' for now
  workflow_name TEXT NOT NULL,
  workflow_yaml TEXT NOT NULL,
  workflow_hash TEXT NOT NULL,               -- sha256 hex of workflow_yaml
  dataset       TEXT NOT NULL,
  split         TEXT NOT NULL,
  task_limit    INTEGER,
  seed          INTEGER NOT NULL,
  config_json   TEXT NOT NULL,
  status        TEXT NOT NULL CHECK (status IN ('running','completed','interrupted','cancelled','failed')),
  pid           INTEGER                      -- the process running it (status running)
);
CREATE INDEX experiments_status ON experiments(status);
CREATE INDEX experiments_created ON experiments(created_at);

CREATE TABLE experiment_tasks (
  experiment_id TEXT NOT NULL REFERENCES experiments(id) ON DELETE CASCADE,
  task_index    INTEGER NOT NULL,
  task_id       TEXT NOT NULL,
  input_json    TEXT NOT NULL,
  expected      TEXT,
  PRIMARY KEY (experiment_id, task_index)
) WITHOUT ROWID;

CREATE TABLE runs (
  id                TEXT PRIMARY KEY,
  experiment_id     TEXT NOT NULL REFERENCES experiments(id) ON DELETE CASCADE,
  task_index        INTEGER NOT NULL,
  task_id           TEXT NOT NULL,
  status            TEXT NOT NULL CHECK (status IN ('completed','failed','cancelled')),
  answer            TEXT,
  expected          TEXT,
  score             REAL NOT NULL,
  correct           INTEGER NOT NULL CHECK (correct IN (0,1)),
  seed              INTEGER NOT NULL,
  prompt_tokens     INTEGER NOT NULL,
  completion_tokens INTEGER NOT NULL,
  started_at        INTEGER NOT NULL,
  ended_at          INTEGER NOT NULL,
  failures_json     TEXT NOT NULL,
  UNIQUE (experiment_id, task_index),
  FOREIGN KEY (experiment_id, task_index) REFERENCES experiment_tasks(experiment_id, task_index) ON DELETE CASCADE
);

CREATE TABLE node_events (
  id            INTEGER PRIMARY KEY,
  run_id        TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  seq           INTEGER NOT NULL,
  node_id       TEXT NOT NULL,
  attempt       INTEGER NOT NULL,
  kind          TEXT NOT NULL CHECK (kind IN ('agent','tool','skill')),
  role          TEXT,
  wired_by      TEXT NOT NULL,
  run_by        TEXT,
  status        TEXT NOT NULL CHECK (status IN ('ok','failed','cascade','skipped')),
  failure_class TEXT CHECK (failure_class IS NULL OR failure_class IN ('wiring','execution','cascade','infrastructure')),
  error_code    TEXT,
  message       TEXT,
  causes_json   TEXT,
  inputs_json   TEXT NOT NULL,
  output_json   TEXT,                        -- NULL: no output; 'null': output was null
  started_at    INTEGER NOT NULL,
  ended_at      INTEGER NOT NULL,
  simulated     INTEGER CHECK (simulated IS NULL OR simulated IN (0,1)),
  UNIQUE (run_id, seq)
);

CREATE TABLE model_calls (
  id                INTEGER PRIMARY KEY,
  run_id            TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  node_event_id     INTEGER NOT NULL REFERENCES node_events(id) ON DELETE CASCADE,
  node_id           TEXT NOT NULL,
  attempt           INTEGER NOT NULL,
  call_index        INTEGER NOT NULL,
  role              TEXT NOT NULL,
  model_ref         TEXT NOT NULL,
  model             TEXT NOT NULL,
  system            TEXT,
  prompt            TEXT NOT NULL,
  params_json       TEXT NOT NULL,
  seed              INTEGER NOT NULL,
  json_schema       TEXT,
  completion        TEXT NOT NULL,
  prompt_tokens     INTEGER NOT NULL,
  completion_tokens INTEGER NOT NULL,
  ms                REAL NOT NULL,
  started_at        INTEGER NOT NULL,
  stop_reason       TEXT,
  error             TEXT,
  UNIQUE (node_event_id, call_index)
);
CREATE INDEX model_calls_run ON model_calls(run_id);
`;

/**
 * A planned task's `meta` (JSON; NULL for tasks planned before), so a grader that reads it
 * (DataWright's parts) sees the task whole on run, resume and replay; and how a call's structured
 * output was repaired (`ModelCallRecord.repair`: `fenced` | `embedded`; NULL: taken as written).
 */
const TASK_META = /* sql */ `
ALTER TABLE experiment_tasks ADD COLUMN meta_json TEXT;
ALTER TABLE model_call_settings ADD COLUMN repair TEXT;
`;

/** Every schema version this code knows, in order. Append only. */
/** Credit and the reward ladder stored with each run (docs/credit.md); `simulated`: faults were injected. */
const CREDIT = /* sql */ `
ALTER TABLE runs ADD COLUMN credit_json TEXT;   -- CreditResult (core/credit), NULL for runs stored before
ALTER TABLE runs ADD COLUMN ladder_json TEXT;   -- Record<role, RoleLadder> (core/reward)
ALTER TABLE runs ADD COLUMN simulated INTEGER NOT NULL DEFAULT 0 CHECK (simulated IN (0,1));
ALTER TABLE node_events ADD COLUMN fault TEXT;  -- injected fault kind (simulated), core/faults
`;

/** Rollout advantages (core/rollouts/advantages.ts) and the prior library of hint cards. */
const IMPROVE = /* sql */ `
CREATE TABLE advantages (
  run_id        TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  role          TEXT NOT NULL,
  mode          TEXT NOT NULL CHECK (mode IN ('ladder','flow-grpo')),  -- per-role ladder GRPO, or Flow-GRPO outcome broadcast
  group_key     TEXT NOT NULL,               -- the task the group was sampled for
  reward        REAL NOT NULL,
  advantage     REAL NOT NULL,
  group_mean    REAL NOT NULL,
  group_std     REAL NOT NULL,
  group_size    INTEGER NOT NULL,
  PRIMARY KEY (run_id, role, mode)
) WITHOUT ROWID;

CREATE TABLE cards (
  id            TEXT PRIMARY KEY,
  role          TEXT NOT NULL,
  title         TEXT NOT NULL,
  applies_when  TEXT NOT NULL,
  advice        TEXT NOT NULL,
  source_runs_json TEXT NOT NULL,            -- run ids the card was distilled from
  experiment_id TEXT,                        -- where those runs came from
  teacher       TEXT NOT NULL,               -- model file (or 'scripted (simulated)')
  shots         INTEGER NOT NULL,
  only_successes INTEGER NOT NULL CHECK (only_successes IN (0,1)),
  simulated     INTEGER NOT NULL DEFAULT 0 CHECK (simulated IN (0,1)),
  created_at    INTEGER NOT NULL,
  meta_json     TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX cards_role ON cards(role);

CREATE TABLE card_uses (
  card_id       TEXT NOT NULL REFERENCES cards(id) ON DELETE CASCADE,
  run_id        TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  PRIMARY KEY (card_id, run_id)
) WITHOUT ROWID;
`;

/**
 * Laptop RL (docs/laptop-rl.md): the token ids of each model call exactly as fed and sampled (JSON arrays;
 * NULL when not recorded), and the weight versions a training loop writes, with their lineage.
 */
const TRAINING = /* sql */ `
ALTER TABLE model_calls ADD COLUMN prompt_token_ids TEXT;      -- JSON number[]: ids fed (BOS included)
ALTER TABLE model_calls ADD COLUMN completion_token_ids TEXT;  -- JSON number[]: ids sampled (final EOS included)

CREATE TABLE weight_versions (
  id            TEXT PRIMARY KEY,
  role          TEXT NOT NULL,               -- the role whose weights these are
  base_path     TEXT NOT NULL,               -- the GGUF the lineage started from
  path          TEXT NOT NULL,               -- this version's GGUF
  parent_id     TEXT REFERENCES weight_versions(id) ON DELETE SET NULL,
  experiment_id TEXT,                        -- the rollouts (or source) experiment it was trained on
  iteration     INTEGER,                     -- train-loop iteration (1-based), NULL for offline steps
  hyper_json    TEXT NOT NULL,               -- hyper-parameters (lr, kl, temperature, group, mode...)
  metrics_json  TEXT NOT NULL,               -- what the step measured (loss, kl, reward...)
  created_at    INTEGER NOT NULL
);
CREATE INDEX weight_versions_role ON weight_versions(role, created_at);
CREATE INDEX weight_versions_parent ON weight_versions(parent_id);
`;

/**
 * Leaner trace writes (measured by bench/store.ts): drops `model_calls_run` (a run's calls are read
 * through its node events, `statements.ts` `callsOfRun`, on the `node_events (run_id, seq)` and
 * `model_calls (node_event_id, call_index)` keys) and the CHECK constraints of `runs` and
 * `node_events`, whose enums the store now checks in the same transaction before writing
 * (`checks.ts`; a bad value is `INVALID_RECORD` as before). The CHECKs are removed by rewriting the
 * tables' stored SQL, the procedure SQLite documents for removing CHECK constraints
 * (sqlite.org/lang_altertable.html, section "Making Other Kinds Of Table Schema Changes"): the
 * on-disk rows and indexes do not change, so nothing is copied.
 */
function leanTraceWrites(db: Database): void {
  db.exec('DROP INDEX IF EXISTS model_calls_run');
  const version = db.pragma('schema_version', { simple: true }) as number;
  db.unsafeMode(true); // writable_schema is refused in defensive mode
  try {
    db.pragma('writable_schema = ON');
    for (const table of ['runs', 'node_events']) {
      const sql = db.prepare(`SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = ?`).pluck().get(table) as string;
      const lean = withoutChecks(sql);
      if (/\bCHECK\b/i.test(lean)) throw new Error(`table ${table}: a CHECK constraint is left after rewriting: ${lean}`);
      db.prepare(`UPDATE sqlite_schema SET sql = ? WHERE type = 'table' AND name = ?`).run(lean, table);
    }
    db.pragma(`schema_version = ${version + 1}`); // every connection re-reads the schema
    db.pragma('writable_schema = OFF');
  } finally {
    db.unsafeMode(false);
  }
  const problems = db.pragma('quick_check', { simple: true });
  if (problems !== 'ok') throw new Error(`schema check after rewriting: ${String(problems)}`);
}

/** `sql` without its `CHECK (...)` clauses (one level of nested parentheses, as in this file's tables). */
export function withoutChecks(sql: string): string {
  return sql.replace(/\s*CHECK\s*\((?:[^()]|\([^()]*\))*\)/gi, '');
}

/** Studies (core/studies): a plan of cells, each a `run` experiment whose id derives from the study's. */
const STUDIES = /* sql */ `
CREATE TABLE studies (
  id          TEXT PRIMARY KEY,             -- st-<name>-<8 hex>
  name        TEXT NOT NULL,
  plan_json   TEXT NOT NULL,                -- the validated plan, paths resolved
  plan_file   TEXT,
  pid         INTEGER,                      -- the process that runs (or last ran) it
  status      TEXT NOT NULL CHECK (status IN ('planned','running','completed','stopped','interrupted','failed')),
  state_json  TEXT NOT NULL,                -- finished train loops, speeds, estimate, wall seconds
  created_at  INTEGER NOT NULL,             -- epoch ms
  updated_at  INTEGER NOT NULL
);
`;

/**
 * Train loops (core/training/loop.ts), so an interrupted one can be resumed: the plan it was
 * started with, how many iterations are complete (their versions recorded with `done` in one
 * transaction) and its progress; status and pid as an experiment's.
 */
const TRAIN_LOOPS = /* sql */ `
CREATE TABLE train_loops (
  id            TEXT PRIMARY KEY,            -- tl-<time>-<rand>
  created_at    INTEGER NOT NULL,            -- epoch ms
  updated_at    INTEGER NOT NULL,            -- epoch ms
  status        TEXT NOT NULL,               -- running | completed | cancelled | failed | interrupted
  pid           INTEGER,                     -- the process that runs (or last ran) it
  iterations    INTEGER NOT NULL,            -- planned
  done          INTEGER NOT NULL DEFAULT 0,  -- iterations 1..done are complete
  versions_dir  TEXT NOT NULL,               -- its files are under <versions_dir>/<id>/
  plan_json     TEXT NOT NULL,               -- what a resume rebuilds the loop from
  state_json    TEXT NOT NULL                -- per-role lineage, iteration metrics, held-out before
);
`;

/** MASS loop records (core/mass; core/store/mass.ts): write-once, keyed by (evolution, kind, key). */
const MASS = /* sql */ `
CREATE TABLE mass_records (
  evolution_id TEXT NOT NULL,
  kind         TEXT NOT NULL,               -- evolution, design, proposal, workspace, verdict, champion
  key          TEXT NOT NULL,               -- unique within (evolution, kind), e.g. 't0/v3'
  task_index   INTEGER,
  seq          INTEGER NOT NULL,            -- order of writing within the evolution
  json         TEXT NOT NULL,               -- canonical JSON (sorted keys)
  created_at   INTEGER NOT NULL,            -- epoch ms
  PRIMARY KEY (evolution_id, kind, key)
) WITHOUT ROWID;
CREATE INDEX mass_records_seq ON mass_records(evolution_id, seq);
`;

/**
 * Workshop mode (core/workshop; core/store/workshops.ts): step results as written (rehearsals and
 * live sessions), sessions with their step state, and the room's predictions.
 */
const WORKSHOPS = /* sql */ `
CREATE TABLE workshop_results (
  source       TEXT NOT NULL,               -- rehearsal:<scenario hash> | session:<session id>
  step_id      TEXT NOT NULL,
  step_index   INTEGER NOT NULL,
  result_json  TEXT NOT NULL,               -- exactly as written: the room replays these bytes
  created_at   INTEGER NOT NULL,            -- epoch ms
  PRIMARY KEY (source, step_id)
) WITHOUT ROWID;
CREATE TABLE workshop_sessions (
  id            TEXT PRIMARY KEY,            -- ws-<scenario>-<time>
  scenario_id   TEXT NOT NULL,
  scenario_hash TEXT NOT NULL,
  mode          TEXT NOT NULL CHECK (mode IN ('room','live')),
  state_json    TEXT NOT NULL,               -- step, timer start, revealed steps, version
  created_at    INTEGER NOT NULL,
  updated_at    INTEGER NOT NULL
);
CREATE TABLE workshop_predictions (
  session_id  TEXT NOT NULL REFERENCES workshop_sessions(id) ON DELETE CASCADE,
  step_id     TEXT NOT NULL,
  attendee    TEXT NOT NULL,                -- a random id the attendee's page keeps
  choice      TEXT NOT NULL,
  at          INTEGER NOT NULL,             -- epoch ms of the latest submission
  PRIMARY KEY (session_id, step_id, attendee)
) WITHOUT ROWID;
`;

/**
 * What each model call really ran with (docs/models.md), one row per call that has any of it,
 * keyed as model_calls is (event, call index): the rendered prompt (after the chat template), a
 * reasoning model's thinking kept apart from the completion, the applied sampler, threads,
 * context and batch size (JSON `AppliedSettings`), and the prompt tokens evaluated (the rest
 * reused from an earlier call's KV state). A table of its own, so the trace tables' rows stay
 * as they were.
 */
const CALL_SETTINGS = /* sql */ `
CREATE TABLE model_call_settings (
  node_event_id           INTEGER NOT NULL REFERENCES node_events(id) ON DELETE CASCADE,
  call_index              INTEGER NOT NULL,
  rendered_prompt         TEXT,
  thinking                TEXT,
  applied_json            TEXT,
  prompt_tokens_evaluated INTEGER,
  PRIMARY KEY (node_event_id, call_index)
) WITHOUT ROWID;
`;

/**
 * Reproducibility records (core/repro, `flowlab verify`): per experiment, train loop, study or
 * evolution id, the fingerprint of what determines it, whether it is exactly repeatable, and the
 * digest of its outputs once finished. A table of its own, so the existing tables stay as they were.
 */
const REPRO = /* sql */ `
CREATE TABLE repro_records (
  id                 TEXT PRIMARY KEY,
  kind               TEXT NOT NULL CHECK (kind IN ('experiment', 'train-loop', 'study', 'evolution')),
  fingerprint_json   TEXT NOT NULL,
  fingerprint_digest TEXT NOT NULL,
  repeatability      TEXT NOT NULL,
  output_digest      TEXT,
  created_at         INTEGER NOT NULL,
  finished_at        INTEGER
) WITHOUT ROWID;
`;

/**
 * Forks (core/experiments/fork.ts): a run re-run from one node run of another with one
 * intervention there. The fork is a run of its own experiment (kind `fork`); this row links it to
 * its parent run, the node run it was forked at and the intervention (JSON).
 */
const FORKS = /* sql */ `
CREATE TABLE run_forks (
  run_id               TEXT PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,
  experiment_id        TEXT NOT NULL REFERENCES experiments(id) ON DELETE CASCADE,
  parent_run_id        TEXT NOT NULL,
  parent_experiment_id TEXT NOT NULL,
  node_id              TEXT NOT NULL,
  attempt              INTEGER NOT NULL,
  intervention_json    TEXT NOT NULL,
  created_at           INTEGER NOT NULL
);
CREATE INDEX run_forks_parent ON run_forks(parent_run_id, created_at);
`;

export const MIGRATIONS: readonly Migration[] = [
  { version: 1, name: 'initial', up: INITIAL },
  { version: 2, name: 'credit-and-ladder', up: CREDIT },
  { version: 3, name: 'advantages-and-cards', up: IMPROVE },
  { version: 4, name: 'token-ids-and-weight-versions', up: TRAINING },
  { version: 5, name: 'lean-trace-writes', up: leanTraceWrites },
  { version: 6, name: 'studies', up: STUDIES },
  { version: 7, name: 'train-loops', up: TRAIN_LOOPS },
  { version: 8, name: 'mass-records', up: MASS },
  { version: 9, name: 'workshops', up: WORKSHOPS },
  { version: 10, name: 'call-settings', up: CALL_SETTINGS },
  { version: 11, name: 'task-meta', up: TASK_META },
  { version: 12, name: 'repro-records', up: REPRO },
  { version: 13, name: 'run-forks', up: FORKS },
  { version: 14, name: 'run-search', up: runSearchMigration },
  { version: 15, name: 'endpoint-decisions', up: ENDPOINT_DECISIONS_SQL },
  { version: 16, name: 'annotations', up: ANNOTATIONS_SQL },
];

/** The newest schema version this code knows. */
export const SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1]?.version ?? 0;
