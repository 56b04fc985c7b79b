import { defineHooks } from '../generated/hooks.js';

/**
 * The products to order again. `present` shows each record as GET shows it to the caller: a
 * product's cost to those who may see it (its owner included), to no one else.
 */
export default defineHooks('products', {
  endpoints: {
    async lowStock({ repositories, present }) {
      const low = await repositories.products.find({
        filter: { stock: { lt: 10 } },
        sort: [{ field: 'stock', direction: 'asc' }],
        limit: 50,
      });
      return low.map((product) => present(product));
    },
  },
});
