/**
 * Where a new user gets the public datasets Flowlab reads: for each dataset, the files its loader
 * expects under the data folder, the pinned source URLs, sizes and sha256 digests, and the
 * licence. Nothing here is bundled with the app: each set is fetched on request
 * (`flowlab datasets fetch <name>`, host/datasetFetch.ts), checked against its sha256 and size,
 * then moved into place. The procedural families (`learn*`) need no files.
 *
 * Sources, bytes and digests are those of the copies the test suite uses, each documented in the
 * shared data folder's README (source repository, commit, path, licence). Licences as stated
 * there: GSM8K MIT, HumanEval MIT, MBPP CC BY 4.0, HotpotQA CC BY-SA 4.0, MuSiQue CC BY 4.0,
 * 2WikiMultihopQA Apache-2.0, BamTwoogle CC BY 4.0; Bamboogle's licence was not verified, and
 * the four multi-hop question files come from a repackaging repository with no LICENSE file,
 * which is why nothing is bundled and each listing says so.
 */

/** One file of a dataset. */
export interface DatasetFile {
  /** Path under the data folder, e.g. `gsm8k/test.jsonl`. */
  path: string;
  /** Source URLs, tried in order (raw files at a pinned commit where the source has one). */
  urls: string[];
  /** Size in bytes of the file as stored (after `gunzip`, when set). */
  bytes: number;
  /** sha256 (hex) of the file as stored. */
  sha256: string;
  /** The URL serves a gzip of the file: its size and sha256, checked before unpacking. */
  gunzip?: { bytes: number; sha256: string };
}

/** How to get one dataset. */
export interface DatasetSource {
  /** The files, all needed. */
  files: DatasetFile[];
  /** The licence, as its source states it. */
  licence: string;
  /** Where it comes from, in words (repository and commit). */
  source: string;
  /** Shown with the listing (e.g. why nothing is bundled). */
  note?: string;
}

const GH = 'https://raw.githubusercontent.com';
const GSM8K = `${GH}/openai/grade-school-math/3101c7d5072418e28b9008a6636bde82a006892c/grade_school_math/data`;
const RAG = `${GH}/chenyiqun/Agentic-RAG/a6694e2ebfa1a3fcbbbe4a5607f6317ba70ddc40/data`;
const MULTIHOP_NOTE = 'question/answer export from a repackaging repository without a LICENSE file; evaluation use, keep attribution';

/** The datasets that need files, by registry name. */
export const DATASET_SOURCES: Readonly<Record<string, DatasetSource>> = {
  gsm8k: {
    files: [
      { path: 'gsm8k/test.jsonl', urls: [`${GSM8K}/test.jsonl`], bytes: 749738, sha256: '3730d312f6e3440559ace48831e51066acaca737f6eabec99bccb9e4b3c39d14' },
      { path: 'gsm8k/train.jsonl', urls: [`${GSM8K}/train.jsonl`], bytes: 4166206, sha256: '17f347dc51477c50d4efb83959dbb7c56297aba886e5544ee2aaed3024813465' },
      { path: 'gsm8k/test_socratic.jsonl', urls: [`${GSM8K}/test_socratic.jsonl`], bytes: 972978, sha256: 'c96673362fa7a699f4836a9b6474a067448f95fe58064727501ee63ba4c3fdb6' },
    ],
    licence: 'MIT (OpenAI)',
    source: 'github.com/openai/grade-school-math @ 3101c7d',
  },
  humaneval: {
    files: [
      {
        path: 'humaneval/HumanEval.jsonl',
        urls: [`${GH}/openai/human-eval/6d43fb980f9fee3c892a914eda09951f772ad10d/data/HumanEval.jsonl.gz`],
        bytes: 214438,
        sha256: '1d49078ba3e2b196b9344535bef34a43021f038fad9561d6ee7c53450609a6a2',
        gunzip: { bytes: 44877, sha256: 'b796127e635a67f93fb35c04f4cb03cf06f38c8072ee7cee8833d7bee06979ef' },
      },
    ],
    licence: 'MIT (OpenAI)',
    source: 'github.com/openai/human-eval @ 6d43fb9',
  },
  mbpp: {
    files: [
      {
        path: 'mbpp/sanitized-mbpp.json',
        urls: [`${GH}/google-research/google-research/master/mbpp/sanitized-mbpp.json`, `${GH}/patdfb/TPC-EES/30c8c572bfcd0fc5fa537210710d7fde134e4868/mbpp/sanitized-mbpp.json`],
        bytes: 300253,
        sha256: '7fec016546acaee11dbe14f9f0bb670e59f41919f7b522a59fba34871da78551',
      },
    ],
    licence: 'CC BY 4.0 (Austin et al. 2021)',
    source: 'github.com/google-research/google-research mbpp/ (a vendored copy at a pinned commit as fallback)',
  },
  bamboogle: {
    files: [{ path: 'multihop_qa/bamboogle_test_questions_and_answers.json', urls: [`${RAG}/bamboogle/bamboogle_test_questions_and_answers.json`], bytes: 13766, sha256: '85adf5bb60cde9fa58dac67cb4e0ad4fe45284b255752505baf4dce3340f375e' }],
    licence: 'not verified (Press et al. 2022, ofirpress/self-ask)',
    source: 'github.com/chenyiqun/Agentic-RAG @ a6694e2',
    note: MULTIHOP_NOTE,
  },
  hotpotqa: {
    files: [{ path: 'multihop_qa/hotpotqa_test_questions_and_answers.json', urls: [`${RAG}/hotpot_qa/hotpotqa_test_questions_and_answers.json`], bytes: 1039779, sha256: '5f840eb93158c2f8875dda07646c3ca6714507d63b93def54632b07620263096' }],
    licence: 'CC BY-SA 4.0 (HotpotQA)',
    source: 'github.com/chenyiqun/Agentic-RAG @ a6694e2',
    note: MULTIHOP_NOTE,
  },
  musique: {
    files: [{ path: 'multihop_qa/musique_test_questions_and_answers.json', urls: [`${RAG}/musique/musique_test_questions_and_answers.json`], bytes: 364482, sha256: '6c7723e9f4539a552c7f5ae26a1ca9131f0f9ab7efb1b47409652f0c99fda7da' }],
    licence: 'CC BY 4.0 (MuSiQue)',
    source: 'github.com/chenyiqun/Agentic-RAG @ a6694e2',
    note: MULTIHOP_NOTE,
  },
  '2wikimultihopqa': {
    files: [{ path: 'multihop_qa/2wikimultihop_test_questions_and_answers.json', urls: [`${RAG}/2wikimultihop_qa/2wikimultihop_test_questions_and_answers.json`], bytes: 1458596, sha256: '85cbe1019b2bd96ca2c0790711fefa47bfa5a564fe881bcf39017dd09e9a9e8d' }],
    licence: 'Apache-2.0 (2WikiMultihopQA)',
    source: 'github.com/chenyiqun/Agentic-RAG @ a6694e2',
    note: MULTIHOP_NOTE,
  },
  bamtwoogle: {
    files: [{ path: 'multihop_qa/bamtwoogle.csv', urls: [`${GH}/google-research-datasets/BamTwoogle/df4b5d5d0462a536e23ced4735aecc861fbcf4de/bamtwoogle.csv`], bytes: 9480, sha256: '4aa38764c257ed08f84f28dc72a681b74d6f33c4c12b30c8f1f2776647a5eec1' }],
    licence: 'CC BY 4.0 (Google Research)',
    source: 'github.com/google-research-datasets/BamTwoogle @ df4b5d5',
  },
};

/** How to get dataset `name` (case-insensitive), or undefined for one that needs no files or is unknown. */
export function datasetSource(name: string): DatasetSource | undefined {
  const key = name.toLowerCase();
  return Object.hasOwn(DATASET_SOURCES, key) ? DATASET_SOURCES[key] : undefined;
}

/** Bytes a fetch of `source` writes (the stored files). */
export function datasetBytes(source: DatasetSource): number {
  return source.files.reduce((n, f) => n + f.bytes, 0);
}

/** The command that fetches dataset `name` into the data folder. */
export function fetchDatasetCommand(name: string): string {
  return `flowlab datasets fetch ${name.toLowerCase()}`;
}
