/** Contract constants of the graph (graph.md §7): tree limits and resolve thresholds, not configuration. */
export const TREE_MAX_DEPTH = 3
export const TREE_PAGE_SIZE = 50
export const TREE_MAX_NODES = 200
export const RESOLVE_MIN_SCORE = 0.5
export const DUPLICATE_SCORE = 0.85
export const RESOLVE_MAX_CANDIDATES = 5
