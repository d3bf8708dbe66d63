/** "1 scope", "2 scopes"; `many` when the plural is not singular + "s" (pages, CLI output, search lines). */
export const plural = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`
