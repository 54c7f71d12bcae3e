import type { Migration } from 'kysely/migration';
import * as initial from './2026-11-21T1100-initial.js';

// Every migration, by its frozen timestamped name. Append new ones; never rename or edit shipped ones.
export const migrations: Record<string, Migration> = {
  '2026-11-21T1100-initial': initial,
};
