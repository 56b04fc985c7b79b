import type { EntityModel } from '../../runtime/model/types.js';
import type { RouteSpec } from '../../runtime/http/entityRoutes.js';
import { writableFields } from './emitTypes.js';

/** The routes an entity needs, in match order (fixed paths before `:id`). Internal entities have none. */
export function entityRouteTable(entity: EntityModel): RouteSpec[] {
  if (entity.internal) return [];
  const base = `/${entity.plural}`;
  const routes: RouteSpec[] = [
    ['GET', `${base}/metadata`, 'metadata'],
    ['GET', `${base}/metadata/type`, 'metadataType'],
    ['GET', `${base}/metadata/fields`, 'metadataFields'],
    ['GET', `${base}/metadata/field/:name`, 'metadataField'],
    ['GET', base, 'list'],
    ['POST', base, 'create'],
    ['POST', `${base}/bulk`, 'bulkCreate'],
    ['GET', `${base}/:id`, 'get'],
    ['PATCH', `${base}/:id`, 'update'],
    ['DELETE', `${base}/:id`, 'remove'],
  ];
  if (writableFields(entity).some((f) => f.type === 'int' || f.type === 'float')) routes.push(['PATCH', `${base}/:id/increment`, 'increment']);
  if (entity.ownership === 'owned') routes.push(['POST', `${base}/:id/archive`, 'archive'], ['POST', `${base}/:id/restore`, 'restore']);
  return routes;
}
