/**
 * The span attributes Flowlab writes and reads, by convention:
 *
 * - OpenTelemetry GenAI semantic conventions (the `gen_ai.*` keys and `error.type`), taken from
 *   `@opentelemetry/semantic-conventions` 1.45 (its `incubating` entry, where the GenAI keys live);
 * - OpenInference (Arize: `openinference.span.kind`, `llm.*`, `graph.node.*`, `input.value` ...),
 *   which Arize Phoenix reads to draw spans and agent graphs; the keys are those of the
 *   OpenInference semantic conventions (github.com/Arize-ai/openinference, spec/semantic_conventions.md);
 * - Flowlab's own `flowlab.*` keys, which carry what neither convention has and the importer
 *   needs to rebuild a trace losslessly (statuses, failure classes, authorship, attempts, the graph).
 *
 * Values are OTLP attribute values: strings, numbers, booleans and homogeneous arrays of them;
 * structured values travel as JSON text. Keys marked CONTENT are written only on request
 * (`withContent`): prompts, completions, node inputs and outputs, answers, the workflow text.
 */
import {
  ATTR_GEN_AI_AGENT_NAME,
  ATTR_GEN_AI_INPUT_MESSAGES,
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_OUTPUT_MESSAGES,
  ATTR_GEN_AI_OUTPUT_TYPE,
  ATTR_GEN_AI_PROVIDER_NAME,
  ATTR_GEN_AI_REQUEST_MAX_TOKENS,
  ATTR_GEN_AI_REQUEST_MODEL,
  ATTR_GEN_AI_REQUEST_SEED,
  ATTR_GEN_AI_REQUEST_STOP_SEQUENCES,
  ATTR_GEN_AI_REQUEST_TEMPERATURE,
  ATTR_GEN_AI_REQUEST_TOP_K,
  ATTR_GEN_AI_REQUEST_TOP_P,
  ATTR_GEN_AI_RESPONSE_FINISH_REASONS,
  ATTR_GEN_AI_RESPONSE_MODEL,
  ATTR_GEN_AI_SYSTEM_INSTRUCTIONS,
  ATTR_GEN_AI_TOOL_CALL_ARGUMENTS,
  ATTR_GEN_AI_TOOL_CALL_RESULT,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_GEN_AI_TOOL_TYPE,
  ATTR_GEN_AI_USAGE_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_OUTPUT_TOKENS,
  ATTR_GEN_AI_WORKFLOW_NAME,
  GEN_AI_OPERATION_NAME_VALUE_CHAT,
  GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL,
  GEN_AI_OPERATION_NAME_VALUE_INVOKE_AGENT,
  GEN_AI_OPERATION_NAME_VALUE_INVOKE_WORKFLOW,
} from '@opentelemetry/semantic-conventions/incubating';
import { ATTR_ERROR_TYPE, ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';

/** OpenTelemetry GenAI keys and the operation names Flowlab's spans carry. */
export const GEN_AI = {
  operation: ATTR_GEN_AI_OPERATION_NAME,
  provider: ATTR_GEN_AI_PROVIDER_NAME,
  workflowName: ATTR_GEN_AI_WORKFLOW_NAME,
  agentName: ATTR_GEN_AI_AGENT_NAME,
  toolName: ATTR_GEN_AI_TOOL_NAME,
  toolType: ATTR_GEN_AI_TOOL_TYPE,
  /** CONTENT */
  toolArguments: ATTR_GEN_AI_TOOL_CALL_ARGUMENTS,
  /** CONTENT */
  toolResult: ATTR_GEN_AI_TOOL_CALL_RESULT,
  requestModel: ATTR_GEN_AI_REQUEST_MODEL,
  responseModel: ATTR_GEN_AI_RESPONSE_MODEL,
  temperature: ATTR_GEN_AI_REQUEST_TEMPERATURE,
  topP: ATTR_GEN_AI_REQUEST_TOP_P,
  topK: ATTR_GEN_AI_REQUEST_TOP_K,
  maxTokens: ATTR_GEN_AI_REQUEST_MAX_TOKENS,
  seed: ATTR_GEN_AI_REQUEST_SEED,
  stopSequences: ATTR_GEN_AI_REQUEST_STOP_SEQUENCES,
  finishReasons: ATTR_GEN_AI_RESPONSE_FINISH_REASONS,
  inputTokens: ATTR_GEN_AI_USAGE_INPUT_TOKENS,
  outputTokens: ATTR_GEN_AI_USAGE_OUTPUT_TOKENS,
  outputType: ATTR_GEN_AI_OUTPUT_TYPE,
  /** CONTENT: `[{type: 'text', content}]` */
  systemInstructions: ATTR_GEN_AI_SYSTEM_INSTRUCTIONS,
  /** CONTENT: `[{role, parts: [{type: 'text', content}]}]` */
  inputMessages: ATTR_GEN_AI_INPUT_MESSAGES,
  /** CONTENT: `[{role: 'assistant', parts: [...], finish_reason}]` */
  outputMessages: ATTR_GEN_AI_OUTPUT_MESSAGES,
  errorType: ATTR_ERROR_TYPE,
  serviceName: ATTR_SERVICE_NAME,
} as const;

export const OP = {
  workflow: GEN_AI_OPERATION_NAME_VALUE_INVOKE_WORKFLOW,
  agent: GEN_AI_OPERATION_NAME_VALUE_INVOKE_AGENT,
  tool: GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL,
  chat: GEN_AI_OPERATION_NAME_VALUE_CHAT,
} as const;

/** OpenInference keys (Arize Phoenix). */
export const OI = {
  spanKind: 'openinference.span.kind',
  sessionId: 'session.id',
  metadata: 'metadata',
  /** CONTENT */
  inputValue: 'input.value',
  inputMime: 'input.mime_type',
  /** CONTENT */
  outputValue: 'output.value',
  outputMime: 'output.mime_type',
  nodeId: 'graph.node.id',
  nodeName: 'graph.node.name',
  parentNodeId: 'graph.node.parent_id',
  agentName: 'agent.name',
  toolName: 'tool.name',
  modelName: 'llm.model_name',
  llmProvider: 'llm.provider',
  llmSystem: 'llm.system',
  invocationParameters: 'llm.invocation_parameters',
  promptTokens: 'llm.token_count.prompt',
  completionTokens: 'llm.token_count.completion',
  totalTokens: 'llm.token_count.total',
  /** CONTENT: `llm.input_messages.<i>.message.role` / `.content` */
  inputMessages: 'llm.input_messages',
  /** CONTENT */
  outputMessages: 'llm.output_messages',
} as const;

/** Langfuse's observation type, which its UI uses to draw agent graphs (langfuse.com, OpenTelemetry docs). */
export const LANGFUSE_OBSERVATION_TYPE = 'langfuse.observation.type';

/** Flowlab's own keys. */
export const FL = {
  /** On a fork's span link to its parent (core/experiments/fork.ts): the parent run, node, attempt and intervention kind. */
  forkParentRunId: 'flowlab.fork.parent_run_id',
  forkNodeId: 'flowlab.fork.node_id',
  forkAttempt: 'flowlab.fork.attempt',
  forkIntervention: 'flowlab.fork.intervention',
  experimentId: 'flowlab.experiment.id',
  experimentKind: 'flowlab.experiment.kind',
  dataset: 'flowlab.experiment.dataset',
  split: 'flowlab.experiment.split',
  experimentSeed: 'flowlab.experiment.seed',
  workflowHash: 'flowlab.workflow.hash',
  /** CONTENT */
  workflowYaml: 'flowlab.workflow.yaml',
  /** The run's graph (TraceGraph, graph.ts) as JSON: every node with its authors, every edge. */
  graph: 'flowlab.graph',

  runId: 'flowlab.run.id',
  taskIndex: 'flowlab.run.task_index',
  taskId: 'flowlab.run.task_id',
  runStatus: 'flowlab.run.status',
  score: 'flowlab.run.score',
  correct: 'flowlab.run.correct',
  runSeed: 'flowlab.run.seed',
  runPromptTokens: 'flowlab.run.prompt_tokens',
  runCompletionTokens: 'flowlab.run.completion_tokens',
  runSimulated: 'flowlab.run.simulated',
  /** The stored reward ladder per role, JSON. */
  ladder: 'flowlab.run.ladder',
  /** CONTENT */
  answer: 'flowlab.run.answer',
  /** CONTENT */
  expected: 'flowlab.run.expected',
  /** CONTENT: the task's input, JSON. */
  taskInput: 'flowlab.task.input',

  nodeId: 'flowlab.node.id',
  attempt: 'flowlab.node.attempt',
  seq: 'flowlab.node.seq',
  kind: 'flowlab.node.kind',
  role: 'flowlab.node.role',
  wiredBy: 'flowlab.node.wired_by',
  runBy: 'flowlab.node.run_by',
  status: 'flowlab.node.status',
  failureClass: 'flowlab.node.failure_class',
  errorCode: 'flowlab.node.error_code',
  message: 'flowlab.node.message',
  causes: 'flowlab.node.causes',
  simulated: 'flowlab.node.simulated',
  fault: 'flowlab.node.fault',
  tool: 'flowlab.node.tool',
  skill: 'flowlab.node.skill',
  /** CONTENT: JSON */
  inputs: 'flowlab.node.inputs',
  /** CONTENT: JSON; absent when the node produced no output. */
  output: 'flowlab.node.output',

  callIndex: 'flowlab.call.index',
  callRole: 'flowlab.call.role',
  modelRef: 'flowlab.call.model_ref',
  callMs: 'flowlab.call.ms',
  /** The sampling parameters as recorded (SamplingParams), JSON. */
  params: 'flowlab.call.params',
  callSeed: 'flowlab.call.seed',
  stopReason: 'flowlab.call.stop_reason',
  callError: 'flowlab.call.error',
  /** CONTENT: JSON schema of the decoding grammar. */
  jsonSchema: 'flowlab.call.json_schema',
  /** CONTENT */
  promptTokenIds: 'flowlab.call.prompt_token_ids',
  /** CONTENT */
  completionTokenIds: 'flowlab.call.completion_token_ids',
} as const;

/** The instrumentation scope of Flowlab's spans; the version is that of this attribute mapping. */
export const FLOWLAB_SCOPE = { name: 'flowlab', version: '1' } as const;
