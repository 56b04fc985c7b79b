import { type EnvironmentVariable, SERVER_VARIABLES } from '../config/environment.js';
import { FEATURES } from './features.js';

/**
 * Every environment variable entigen reads: the server's own, then each feature's. The reference
 * page of the documentation is written from this table, and a test fails when the code reads a
 * variable that is not in it.
 */
export const ENVIRONMENT_VARIABLES: readonly EnvironmentVariable[] = [
  ...SERVER_VARIABLES,
  ...FEATURES.flatMap((feature) => feature.env ?? []),
];
