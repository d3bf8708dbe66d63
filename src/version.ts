/** The version of this build (kept equal to package.json by test/version.test.ts). */
export const VERSION = "0.1.0"
