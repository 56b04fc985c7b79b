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
  if (entity.versioning === 'full') {
    routes.push(
      ['GET', `${base}/:id/versions`, 'versions'],
      ['GET', `${base}/:id/versions/compare`, 'compareVersions'],
      ['GET', `${base}/:id/versions/:version`, 'version'],
      ['POST', `${base}/:id/revert/:version`, 'revert'],
    );
  }
  if (entity.versioning === 'simple') routes.push(['GET', `${base}/:id/audit`, 'audit']);
  if (entity.fields.some((f) => f.trackChanges)) {
    routes.push(['GET', `${base}/:id/field-changes`, 'fieldChanges'], ['PUT', `${base}/:id/field-changes/:changeId`, 'decideFieldChange']);
  }
  return routes;
}
