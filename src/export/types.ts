/** What an export is: its files (path and content) and the options of one build. */
export interface ExportFile {
  /** relative to the scope folder, e.g. "rules/sales-0001.md" */
  readonly path: string
  readonly content: string
}

export interface ExportFiles {
  readonly scope: string
  /** sorted by path */
  readonly files: ReadonlyArray<ExportFile>
}

export interface ExportOptions {
  /** IANA zone of the README time (config.zone) */
  readonly zone: string
  /** export time, epoch milliseconds */
  readonly now: number
}
