export {
  CORPUS_MAX_BYTES,
  PASSAGE_WORDS,
  corpusDocuments,
  corpusSignature,
  forgetCorpora,
  listCorpusFiles,
  openCorpus,
  passagesOf,
  type CorpusFile,
  type OpenedCorpus,
} from './corpus.ts';
