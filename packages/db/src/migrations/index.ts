import type { Migration } from 'kysely/migration';
import * as initial from './2026-11-21T1100-initial.js';
import * as memoryFingerprint from './2026-11-21T1130-memory-fingerprint.js';
import * as indexedSourceMeta from './2026-11-21T1140-indexed-source-meta.js';
import * as registryListRanks from './2026-11-21T1150-registry-list-ranks.js';
import * as registrySearchDocs from './2026-11-21T1220-registry-search-docs.js';
import * as registryDerivedState from './2026-11-21T1240-registry-derived-state.js';
import * as registryPackagesFillfactor from './2026-11-21T1250-registry-packages-fillfactor.js';
import * as downloadBatches from './2026-11-21T1300-download-batches.js';
import * as ginNoPendingList from './2026-11-21T1310-gin-no-pending-list.js';
import * as searchKeys from './2026-11-21T1400-search-keys.js';
import * as searchPrefixStats from './2026-11-21T1410-search-prefix-stats.js';
import * as searchBlocks from './2026-11-24T1000-search-blocks.js';
import * as auditIndexesAscending from './2026-11-25T0000-audit-indexes-ascending.js';
import * as searchFirstCharacters from './2026-11-25T0100-search-first-characters.js';
import * as searchInitials from './2026-11-25T0300-search-initials.js';
import * as packageVersions from './2026-11-25T1200-package-versions.js';
import * as versionRisk from './2026-11-25T1300-version-risk.js';
import * as publishing from './2026-11-25T1400-publishing.js';
import * as memorySearch from './2026-11-25T1500-memory-search.js';
import * as tunnelNonces from './2026-11-25T1600-tunnel-nonces.js';
import * as dependencies from './2026-11-25T1610-dependencies.js';
import * as registryDiscovery from './2026-11-25T1700-registry-discovery.js';
import * as popularityRanksTable from './2026-11-25T1710-popularity-ranks-table.js';
import * as webhookOwner from './2026-11-28T1200-webhook-owner.js';
import * as uniqueDownloaders from './2026-11-28T1300-unique-downloaders.js';
import * as edgeClientAccess from './2026-11-28T1430-edge-client-access.js';
import * as immutableVersions from './2026-11-28T2200-immutable-versions.js';
import * as popularityRanksFunction from './2026-11-28T2210-popularity-ranks-function.js';
import * as contentBlobsGc from './2026-11-28T2220-content-blobs-gc.js';
import * as accounts from './2026-11-29T0100-accounts.js';
import * as privatePackages from './2026-11-29T0110-private-packages.js';
import * as accessChanges from './2026-11-29T0200-access-changes.js';
import * as privateSearchKeys from './2026-11-29T0210-private-search-keys.js';
import * as publicCatalogMark from './2026-11-29T0220-public-catalog-mark.js';
import * as privateSearchPostings from './2026-11-29T0300-private-search-postings.js';
import * as edgeDelegatedAccess from './2026-11-29T0400-edge-delegated-access.js';
import * as operatorClientRedirects from './2026-11-29T0500-operator-client-redirects.js';
import * as edgeBackendOwners from './2026-11-29T0510-edge-backend-owners.js';
import * as delegationRevokedBefore from './2026-11-29T0520-delegation-revoked-before.js';
import * as registrySignatures from './2026-11-29T0600-registry-signatures.js';
import * as transparencyLog from './2026-11-29T0610-transparency-log.js';
import * as versionAttestations from './2026-11-29T0620-version-attestations.js';
import * as ciUploadSources from './2026-11-29T0630-ci-upload-sources.js';
import * as taskStatusMessage from './2026-11-29T0700-task-status-message.js';
import * as edgeDelegationKeys from './2026-11-29T2200-edge-delegation-keys.js';
import * as privateListIndex from './2026-11-29T2210-private-list-index.js';
import * as privateSearchGroups from './2026-11-29T2300-private-search-groups.js';
import * as auditRecordsNoSerial from './2026-11-30T0300-audit-records-no-serial.js';
import * as privateGroupsFollowOwners from './2026-11-30T0400-private-groups-follow-owners.js';

// Every migration, by its frozen timestamped name. Append new ones; never rename or edit shipped ones.
export const migrations: Record<string, Migration> = {
  '2026-11-21T1100-initial': initial,
  '2026-11-21T1130-memory-fingerprint': memoryFingerprint,
  '2026-11-21T1140-indexed-source-meta': indexedSourceMeta,
  '2026-11-21T1150-registry-list-ranks': registryListRanks,
  '2026-11-21T1220-registry-search-docs': registrySearchDocs,
  '2026-11-21T1240-registry-derived-state': registryDerivedState,
  '2026-11-21T1250-registry-packages-fillfactor': registryPackagesFillfactor,
  '2026-11-21T1300-download-batches': downloadBatches,
  '2026-11-21T1310-gin-no-pending-list': ginNoPendingList,
  '2026-11-21T1400-search-keys': searchKeys,
  '2026-11-21T1410-search-prefix-stats': searchPrefixStats,
  '2026-11-24T1000-search-blocks': searchBlocks,
  '2026-11-25T0000-audit-indexes-ascending': auditIndexesAscending,
  '2026-11-25T0100-search-first-characters': searchFirstCharacters,
  '2026-11-25T0300-search-initials': searchInitials,
  '2026-11-25T1200-package-versions': packageVersions,
  '2026-11-25T1300-version-risk': versionRisk,
  '2026-11-25T1400-publishing': publishing,
  '2026-11-25T1500-memory-search': memorySearch,
  '2026-11-25T1600-tunnel-nonces': tunnelNonces,
  '2026-11-25T1610-dependencies': dependencies,
  '2026-11-25T1700-registry-discovery': registryDiscovery,
  '2026-11-25T1710-popularity-ranks-table': popularityRanksTable,
  '2026-11-28T1200-webhook-owner': webhookOwner,
  '2026-11-28T1300-unique-downloaders': uniqueDownloaders,
  '2026-11-28T1430-edge-client-access': edgeClientAccess,
  '2026-11-28T2200-immutable-versions': immutableVersions,
  '2026-11-28T2210-popularity-ranks-function': popularityRanksFunction,
  '2026-11-28T2220-content-blobs-gc': contentBlobsGc,
  '2026-11-29T0100-accounts': accounts,
  '2026-11-29T0110-private-packages': privatePackages,
  '2026-11-29T0200-access-changes': accessChanges,
  '2026-11-29T0210-private-search-keys': privateSearchKeys,
  '2026-11-29T0220-public-catalog-mark': publicCatalogMark,
  '2026-11-29T0300-private-search-postings': privateSearchPostings,
  '2026-11-29T0400-edge-delegated-access': edgeDelegatedAccess,
  '2026-11-29T0500-operator-client-redirects': operatorClientRedirects,
  '2026-11-29T0510-edge-backend-owners': edgeBackendOwners,
  '2026-11-29T0520-delegation-revoked-before': delegationRevokedBefore,
  '2026-11-29T0600-registry-signatures': registrySignatures,
  '2026-11-29T0610-transparency-log': transparencyLog,
  '2026-11-29T0620-version-attestations': versionAttestations,
  '2026-11-29T0630-ci-upload-sources': ciUploadSources,
  '2026-11-29T0700-task-status-message': taskStatusMessage,
  '2026-11-29T2200-edge-delegation-keys': edgeDelegationKeys,
  '2026-11-29T2210-private-list-index': privateListIndex,
  '2026-11-29T2300-private-search-groups': privateSearchGroups,
  '2026-11-30T0300-audit-records-no-serial': auditRecordsNoSerial,
  '2026-11-30T0400-private-groups-follow-owners': privateGroupsFollowOwners,
};
