/** Stored runs, node events and model calls as CSV or JSON lines (tables.ts). */
export { ANNOTATION_COLUMNS, annotationRows, MODEL_CALL_COLUMNS, NODE_EVENT_COLUMNS, RUN_COLUMNS, toCsv, toJsonl, traceTables, type Row, type TraceTables } from './tables.ts';
