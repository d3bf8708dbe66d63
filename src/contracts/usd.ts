/**
 * A US-dollar amount as status and doctor print it (without the sign): cents from one cent up
 * (and 0), else the figure to its first two significant digits, so a small spend or cap never
 * reads 0.00.
 */
export const usdAmount = (x: number): string =>
  x === 0 || Math.abs(x) >= 0.01
    ? x.toFixed(2)
    : x.toFixed(Math.min(20, 1 - Math.floor(Math.log10(Math.abs(x))))).replace(/0+$/, "")
