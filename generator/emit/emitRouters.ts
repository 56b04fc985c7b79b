import { entityRouteTable } from '../../runtime/api/entityRoutes.js';
import type { AppModel } from '../../runtime/model/types.js';
import { newWriter, quote } from './header.js';

/** generated/routers/<plural>.ts: the entity's route table wired to its compiled validators. */
export function emitRouters(model: AppModel): Map<string, string> {
  const files = new Map<string, string>();
  for (const entity of model.entities) {
    const writer = newWriter();
    writer.writeLine("import { defineEntityRoutes } from 'entigen/runtime';");
    writer.writeLine(`import * as validators from '../validators/${entity.plural}.js';`);
    writer.blankLine();
    const routes = entityRouteTable(entity);
    writer.writeLine(
      entity.internal
        ? `/** ${entity.label}: internal, served by the runtime's own routes. */`
        : `/** Routes of /api/v1/${entity.plural}. */`,
    );
    writer.write(`export const ${entity.plural}Routes = defineEntityRoutes(`).inlineBlock(() => {
      writer.writeLine(`plural: ${quote(entity.plural)},`);
      writer.writeLine('validators,');
      if (routes.length > 0) {
        writer.write('routes: [').indent(() => {
          for (const [method, path, handler] of routes)
            writer.writeLine(`[${quote(method)}, ${quote(path)}, ${quote(handler)}],`);
        });
        writer.writeLine('],');
      }
    });
    writer.write(');').newLine();
    files.set(`routers/${entity.plural}.ts`, writer.toString());
  }
  return files;
}
