// `@pkgreg/registry/provenance`: the provenance checks a client runs (the CLI bundles them), each
// module importing nothing but node:crypto. Keep database code out: the CLI's bundle would carry it.
export {
  type AttestationCheck,
  type DsseEnvelope,
  type ExpectedProvenance,
  verifyAttestation,
} from './attestations.js';
export { type Checkpoint, type NoteCheck, noteKeyHash, openCheckpointNote } from './checkpoint-note.js';
export { logEntryText, logOrigin } from './log-entry.js';
export { HASH_SIZE, leafHash, verifyConsistency, verifyInclusion } from './merkle.js';
export { publicKeyFromBase64 } from './signer.js';
