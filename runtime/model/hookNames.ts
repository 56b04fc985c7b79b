/** The hooks a hook module may define (shared by the build's check and the server's). */
export const HOOK_NAMES = ['beforeCreate', 'beforeUpdate', 'beforeDelete', 'afterCommit'] as const;
export type HookName = (typeof HOOK_NAMES)[number];
