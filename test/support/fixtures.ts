/** Request fixtures for sources and proposals. */
import type { ProposalRequest } from "../../src/domain/proposal-schemas.js"
import type { SourceRequest } from "../../src/domain/source-schemas.js"

export const MAIL_TEXT = [
  "Hallo zusammen,",
  "",
  "ab sofort gilt: Vor jeder Bestellung schwarzer Hakenleisten (RAL 9005) fragen wir beim Lieferanten",
  "die aktuelle Lieferzeit an – „ohne Bestätigung keine Bestellung“.",
  "",
  "Viele Grüße",
  "Maria"
].join("\r\n")

export const mailSource = (over: Partial<SourceRequest> = {}, id = "mail:<order-rule@example.com>"): SourceRequest => ({
  scope: "sales",
  source: {
    kind: "mail", id, title: "Bestellungen Hakenleisten", occurred_at: "2026-03-12T09:15:00Z",
    sender: "maria@example.com", thread: null, link: "https://mail.example.com/m/1"
  },
  text: MAIL_TEXT,
  attachments: [
    { filename: "preisliste.pdf", media_type: "application/pdf", size: 1234, external: "paperless:12", text: "Preisliste 2026", text_origin: "ocr" },
    { filename: "foto.jpg", media_type: "image/jpeg", size: 99, external: null, text: null, text_origin: null }
  ],
  ...over
})

export const jamieSource = (over: Partial<SourceRequest> = {}, id = "jamie:meeting-2026-03-12"): SourceRequest => ({
  scope: "sales",
  source: { kind: "jamie", id, title: "Weekly sales", occurred_at: "2026-03-12T10:00:00Z", sender: null, link: "https://jamie.example.com/m/7" },
  segments: [
    { start_s: 0, speaker: "Tom", text: "Good morning everyone, let's start." },
    { start_s: 100, speaker: "Maria", text: "From now on we always ask the supplier for the delivery time" },
    { start_s: 220, speaker: "Maria", text: "before ordering black hook rails." },
    { start_s: 400, speaker: "Tom", text: "Agreed, next topic is the payment terms for Müller GmbH." }
  ],
  attachments: [],
  ...over
})

export const mailProposal = (over: Partial<ProposalRequest> = {}): ProposalRequest => ({
  scope: "sales",
  kind: "rule",
  statement: "Ask the supplier for the delivery time before ordering black hook rails",
  source: {
    kind: "mail", id: "mail:<order-rule@example.com>",
    quote: "Vor jeder Bestellung schwarzer Hakenleisten (RAL 9005) fragen wir beim Lieferanten die aktuelle Lieferzeit an",
    link: null
  },
  said_at: "2026-03-12T09:15:00Z",
  speaker: "Maria",
  relations: [{ kind: "product", name: "Hakenleiste schwarz", ref: null }],
  keywords: ["Lieferzeit", "Hakenleiste"],
  valid_from: "2026-03-12",
  supersedes: null,
  ...over
})

export const manualProposal = (statement: string, over: Partial<ProposalRequest> = {}): ProposalRequest =>
  mailProposal({ statement, source: { kind: "manual", quote: "said in the hallway", link: null }, ...over })
