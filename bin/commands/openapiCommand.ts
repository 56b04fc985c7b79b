import { checkedModel } from '../../generator/build.js';
import { openApiDocument } from '../../generator/emit/openapi/emitOpenApi.js';
import { stableJson } from '../../generator/emit/stableJson.js';
import { readInputs } from '../../generator/readInputs.js';
import type { PathOptions } from './buildCommand.js';
import { reportFailure } from './reportFailure.js';

/** `entigen openapi`: the OpenAPI 3.1 document of the entities, on stdout (the same text as generated/openapi.json). */
export async function openapiCommand(options: PathOptions): Promise<void> {
  try {
    const model = checkedModel(readInputs(process.cwd(), options.entities));
    process.stdout.write(`${stableJson(openApiDocument(model))}\n`);
  } catch (error) {
    reportFailure(error);
  }
}
