// Names the command tree shows in its help, kept apart from the modules that use them so that building
// the tree loads nothing else (program.ts).

export const DEFAULT_REGISTRY = 'https://registry.pkgreg.dev';

export const LOCKFILE_NAME = 'pkgreg-lock.json';
