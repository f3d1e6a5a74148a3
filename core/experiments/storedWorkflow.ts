/**
 * What a stored experiment's workflow text is parsed and run with, beyond the host's tools: a
 * MASS step (core/mass/stored.ts; `config.mass` is set, and a fork of one inherits it) was
 * compiled with the MASS contract checks (core/mass `storedMassChecks`: MASS_CHECKS and every
 * family's own, e.g. learn-design's) and the re-delegation decision tool (`massTools`), so its text parses, replays and forks only with them.
 */
import type { ToolSource } from '../engine/index.ts';
import { massTools, storedMassChecks } from '../mass/index.ts';
import type { ExperimentConfig } from '../store/index.ts';
import type { CheckRegistry, ToolLookup } from '../workflow/index.ts';

/** Tools and named checks of a stored experiment (`checks` undefined: the built-in ones). */
export interface StoredWorkflowOptions {
  tools: ToolSource & ToolLookup;
  checks?: CheckRegistry;
}

/** The parse and run options of an experiment with this stored config, over the host's `tools`. */
export function storedWorkflowOptions(config: ExperimentConfig | null | undefined, tools: ToolSource & ToolLookup): StoredWorkflowOptions {
  if (config?.mass === undefined) return { tools };
  return { tools: massTools(tools) as ToolSource & ToolLookup, checks: storedMassChecks() };
}
