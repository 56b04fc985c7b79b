import { defineHooks, reject } from '../generated/hooks.js';

/**
 * Orders take their quantity off the product's stock in the order's own transaction: both
 * commit, or neither does. A cancelled order gives it back.
 */
export default defineHooks('orders', {
  async beforeCreate({ data, repositories }) {
    const product = await repositories.products.get(data.product);
    if (!product) reject('UNPROCESSABLE_ENTITY', 'The product does not exist', { product: 'does not exist' });
    const stock = product.stock ?? 0;
    if (stock < data.quantity) {
      reject('CONFLICT', `Only ${stock} of ${product.name} in stock`, { quantity: `must be at most ${stock}` });
    }
    await repositories.products.increment(product.id, { stock: -data.quantity });
    // A read-only field: only the server sets it, here from the product's price.
    return { ...data, total: product.price * data.quantity };
  },

  async beforeUpdate({ data, existing, repositories, origin }) {
    // Approving goes through POST /orders/{id}/approve, whose handler writes with the origin
    // `endpoint:approve`: a PATCH (or a batch's or an agent's update) cannot approve.
    if (data.status === 'approved' && existing.status !== 'approved' && origin !== 'endpoint:approve') {
      reject('FORBIDDEN', 'An order is approved with POST /api/v1/orders/{id}/approve', {
        status: 'is set to approved by the approve endpoint',
      });
    }
    if (data.quantity !== undefined && data.quantity !== existing.quantity) {
      reject('UNPROCESSABLE_ENTITY', 'The quantity of an order cannot change; cancel it and order again', {
        quantity: 'cannot change',
      });
    }
    // A rule across fields: approving needs a note, on the order or in the same change.
    if (data.status === 'approved' && !(data.note ?? existing.note)) {
      reject('UNPROCESSABLE_ENTITY', 'An order is approved with a note', { note: 'is required to approve an order' });
    }
    if (existing.status === 'cancelled' && data.status !== undefined && data.status !== 'cancelled') {
      reject('UNPROCESSABLE_ENTITY', 'A cancelled order stays cancelled', { status: 'cannot leave cancelled' });
    }
    if (data.status === 'cancelled' && existing.status !== 'cancelled') {
      await repositories.products.increment(existing.product, { stock: existing.quantity });
    }
    return data;
  },

  endpoints: {
    async approve({ record, body, repositories, now }) {
      if (record.status !== 'placed') {
        reject('UNPROCESSABLE_ENTITY', `Only a placed order can be approved; this one is ${record.status}`, {
          status: 'must be placed',
        });
      }
      // approvedAt is read-only: clients cannot send it, server code sets it (checked against its type).
      const approved = { status: 'approved' as const, note: body.note, approvedAt: now.toISOString() };
      return (await repositories.orders.update(record.id, approved)) ?? undefined;
    },
    async summary({ repositories }) {
      const statuses = ['placed', 'approved', 'cancelled'] as const;
      const counts = await Promise.all(statuses.map((status) => repositories.orders.count({ status })));
      return Object.fromEntries(statuses.map((status, i) => [status, counts[i]]));
    },
  },
});
