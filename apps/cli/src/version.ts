// Replaced at bundle time by scripts/build.mjs with package.json's version.
declare const PKGREG_CLI_VERSION: string;

export const CLI_VERSION: string = typeof PKGREG_CLI_VERSION === 'string' ? PKGREG_CLI_VERSION : '0.0.0-dev';
