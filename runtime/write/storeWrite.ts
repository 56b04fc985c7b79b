import { ApiError } from '../errors/apiError.js';
import type { EntityModel } from '../model/types.js';
import { UniqueConflict } from '../store/types.js';

/** Runs a store write, turning a unique-constraint refusal into 409 CONFLICT naming the field. */
export async function storeWrite<T>(entity: EntityModel, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (error instanceof UniqueConflict) {
      throw new ApiError('CONFLICT', `Another ${entity.name} already has this ${error.field}`, {
        [error.field]: 'must be unique',
      });
    }
    throw error;
  }
}
