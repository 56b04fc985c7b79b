// TypeBox's type builder, the one value of TypeBox the route declarations use. The package is
// some 200 small ES modules, over 100 ms of every start to load; scripts/bundleTypebox.mjs
// replaces this file's compiled form with one bundled file of the same export (some 15 ms).
export { Type } from '@sinclair/typebox';
