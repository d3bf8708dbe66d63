/**
 * The HttpApi of /v1 (gaps.md §3): routing and /openapi.json. Every endpoint is handled raw by
 * the scope-check pipeline (auth/scope-check.ts), which reads and decodes the request itself so
 * that the contract's order of checks and its ErrorBody hold on every route.
 */
import { CloseLinkRequest, PersonEntityRequest, PersonLinkRequest, UnarchiveRequest } from "../graph/correction-schemas.js"
import { HttpApi, HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { VERSION } from "../version.js"
import { completeSpec } from "./openapi.js"
import { MAX_BULK_ITEMS } from "../contracts/bulk.js"
import { BulkDecisionRequest, BulkDecisionResult, DecisionRequest, DecisionResult } from "../domain/decision-schemas.js"
import { ProposalCreated, ProposalDraft, ProposalSummary, RetractRequest, RetractResult } from "../domain/proposal-schemas.js"
import { FeedbackRequest, SearchRequest, SearchResponse } from "../domain/search-schemas.js"
import { SourceOut, SourceRequest, SourceStored } from "../domain/source-schemas.js"
import { ErrorBody, GraphErrorBody } from "../contracts/errors.js"
import { CreateEntityRequest, MoveEntityRequest, UpdateEntityRequest } from "../graph/schemas.js"
import { LinkRequest } from "../graph/link-types.js"
import { RedactionCreate, RedactionCreated, RedactionPreviewOut, RedactionPreviewRequest } from "../contracts/redaction.js"
import { ArchiveRequest, ArchiveResult, BulkReviewRequest, BulkReviewResult, ReviewRequest, ReviewResult, StructureOut } from "../graph/review-schemas.js"

const Id = Schema.Struct({ id: Schema.String })
const ScopePath = Schema.Struct({ scope: Schema.String })
const Err = (status: number) => ErrorBody.annotations(HttpApiSchema.annotations({ status }))
const Json = Schema.Unknown

export class SourcesApi extends HttpApiGroup.make("sources")
  .add(HttpApiEndpoint.post("store", "/v1/sources").setPayload(SourceRequest).addSuccess(SourceStored, { status: 201 })
    .addSuccess(SourceStored).addError(Err(409)).addError(Err(413)).addError(Err(422))
    .annotate(OpenApi.Description, "201: stored (created true); 200: the identical repeat by the same grant, nothing written (created false); 409 source-conflict: anything else under that id; 422 secret-detected (findings name field and kind)"))
  .add(HttpApiEndpoint.get("read", "/v1/sources/:id").setPath(Id).addSuccess(SourceOut).addError(Err(404))
    .annotate(OpenApi.Description, "Query: scope (required), include = comma list of text, attachments"))
{}

export class ProposalsApi extends HttpApiGroup.make("proposals")
  .add(HttpApiEndpoint.post("propose", "/v1/proposals").setPayload(ProposalDraft).addSuccess(ProposalCreated, { status: 201 })
    .addSuccess(ProposalCreated).addError(Err(422))
    .annotate(OpenApi.Description, "The same request as the MCP tool propose_rule: scope, kind, statement and source required; every other field optional (left out, or null where its description says so, it takes the default it names). 201: a new proposal (status proposed, or confirmed when the approval policy adopted it), exceptions = the codes of the mandatory exceptions that hold it for a person; 200: a repeat by the same grant (every field sent the same as in its earlier proposal), answered with the existing rule. 422 secret-detected, source-unknown, quote-not-found (with closest), reference-unknown"))
  .add(HttpApiEndpoint.get("list", "/v1/proposals").addSuccess(Schema.Struct({ proposals: Schema.Array(ProposalSummary), next_after: Schema.NullOr(Schema.String) }))
    .annotate(OpenApi.Description, "Query: scope (required), limit 1–200 (default 100), after = rule id"))
{}

export class RulesApi extends HttpApiGroup.make("rules")
  .add(HttpApiEndpoint.get("list", "/v1/rules").addSuccess(Json)
    .annotate(OpenApi.Description, "Query: scope (required), status = proposed|confirmed|superseded, relation = <kind>:<name>, limit 1–200, after = rule id"))
  .add(HttpApiEndpoint.get("read", "/v1/rules/:id").setPath(Id).addSuccess(Json).addError(Err(404))
    .annotate(OpenApi.Description, "Query: as_of = YYYY-MM-DD, include_proposals = true|false"))
  .add(HttpApiEndpoint.get("versions", "/v1/rules/:id/versions").setPath(Id).addSuccess(Json).addError(Err(404)))
  .add(HttpApiEndpoint.get("provenance", "/v1/rules/:id/provenance").setPath(Id).addSuccess(Json).addError(Err(404)))
  .add(HttpApiEndpoint.post("retract", "/v1/rules/:id/retract").setPath(Id).setPayload(RetractRequest).addSuccess(RetractResult)
    .addError(Err(404)).addError(Err(409))
    .annotate(OpenApi.Description, "retract (right propose): takes back a rule the approval policy adopted, confirmed → superseded from today, while no person confirmed or reviewed it (409 already-decided after that)"))
{}

export class DecisionApi extends HttpApiGroup.make("decision")
  .add(HttpApiEndpoint.post("decide", "/v1/rules/:id/decision").setPath(Id).setPayload(DecisionRequest).addSuccess(DecisionResult)
    .addError(Err(409)).addError(Err(403))
    .annotate(OpenApi.Description, "Approval channel: a person with decide; same origin and the csrf token required"))
  .add(HttpApiEndpoint.post("decideMany", "/v1/decisions").setPayload(BulkDecisionRequest).addSuccess(BulkDecisionResult)
    .addError(Err(400)).addError(Err(403)).addError(Err(404)).addError(Err(409)).addError(Err(422))
    .annotate(OpenApi.Description, `Approval channel: several decisions on rules of one scope in one transaction, 1–${MAX_BULK_ITEMS} items; all or nothing: the first refused item refuses the request with the single decision's code, named in message and issues (items[<i>]); counts as one decision for the rate limit; same origin and the csrf token required`))
{}

export class StatusApi extends HttpApiGroup.make("status")
  .add(HttpApiEndpoint.get("status", "/v1/status").addSuccess(Json))
{}

export class ExportApi extends HttpApiGroup.make("export")
  .add(HttpApiEndpoint.get("export", "/v1/export/:scope").setPath(ScopePath).addSuccess(HttpApiSchema.Uint8Array({ contentType: "application/gzip" }))
    .annotate(OpenApi.Description, "Approval channel: the scope's Markdown export as .tar.gz (a person with decide)"))
  .add(HttpApiEndpoint.get("rejected", "/v1/rejected").addSuccess(Json)
    .annotate(OpenApi.Description, "Approval channel. Query: scope (required)"))
{}

export class SearchApi extends HttpApiGroup.make("search")
  .add(HttpApiEndpoint.post("search", "/v1/search").setPayload(SearchRequest).addSuccess(SearchResponse))
  .add(HttpApiEndpoint.post("feedback", "/v1/search/:search_id/feedback").setPath(Schema.Struct({ search_id: Schema.String }))
    .setPayload(FeedbackRequest).addSuccess(Schema.Struct({ recorded: Schema.Number })).addError(Err(404)))
{}

const GraphErr = (status: number) => GraphErrorBody.annotations(HttpApiSchema.annotations({ status }))

export class EntitiesApi extends HttpApiGroup.make("entities")
  .add(HttpApiEndpoint.get("resolve", "/v1/entities/resolve").addSuccess(Json).addError(GraphErr(400))
    .annotate(OpenApi.Description, "resolve_entity. Query: scope, q (≤ 200 characters, also normalized), type. {scope, candidates (≤ 5), path, next}"))
  .add(HttpApiEndpoint.post("create", "/v1/entities").setPayload(CreateEntityRequest).addSuccess(Json, { status: 201 })
    .addError(GraphErr(409)).addError(GraphErr(422))
    .annotate(OpenApi.Description, "create_entity: EntityOut + created, path, next; refusals are GraphErrorBody"))
  .add(HttpApiEndpoint.get("tree", "/v1/entities").addSuccess(Json).addError(GraphErr(422))
    .annotate(OpenApi.Description, "list_structure (the tree). Query: scope, parent (entity id; top level without), depth 1–3 (default 1), page (50 a page)"))
  .add(HttpApiEndpoint.get("read", "/v1/entities/:id").setPath(Id).addSuccess(Json).addError(GraphErr(404))
    .annotate(OpenApi.Description, "read_entity: EntityOut + path + versions. Query: scope (optional; default the id's scope)"))
  .add(HttpApiEndpoint.post("move", "/v1/entities/:id/move").setPath(Id).setPayload(MoveEntityRequest).addSuccess(Json)
    .addError(GraphErr(409)).addError(GraphErr(422)))
  .add(HttpApiEndpoint.post("update", "/v1/entities/:id/update").setPath(Id).setPayload(UpdateEntityRequest).addSuccess(Json)
    .addError(GraphErr(409)).addError(GraphErr(400)))
{}

export class LinksApi extends HttpApiGroup.make("links")
  .add(HttpApiEndpoint.post("propose", "/v1/links").setPayload(LinkRequest).addSuccess(Json, { status: 201 }).addSuccess(Json)
    .addError(GraphErr(400)).addError(GraphErr(404)).addError(GraphErr(422))
    .annotate(OpenApi.Description, "propose_link: {created, status, link: LinkOut, path, next, approval_url}; 201 when created, 200 with created: false for the same open link"))
  .add(HttpApiEndpoint.get("list", "/v1/links").addSuccess(Json).addError(GraphErr(404)).addError(GraphErr(422))
    .annotate(OpenApi.Description, "list_links. Query: scope, ref (rule/…, source/…, attachment/…#n, entity/…), grouped = true|false (entity only: everything about it and its descendants), page (50 a page)"))
{}

export class StructureApi extends HttpApiGroup.make("structure")
  .add(HttpApiEndpoint.get("list", "/v1/structure").addSuccess(StructureOut)
    .annotate(OpenApi.Description, "list_structure: the pending structure changes of a scope, newest first. Query: scope"))
  .add(HttpApiEndpoint.post("review", "/v1/reviews").setPayload(Schema.Union(ReviewRequest, BulkReviewRequest)).addSuccess(Schema.Union(ReviewResult, BulkReviewResult))
    .addError(GraphErr(400)).addError(GraphErr(403)).addError(GraphErr(404)).addError(GraphErr(409))
    .annotate(OpenApi.Description, `Approval channel: review_structure (confirm/revert entity/<id>@<n>, confirm/reject link/<id>); same origin and the csrf token required. The bulk body {items: [1–${MAX_BULK_ITEMS} reviews of one scope]} reviews them in one transaction, all or nothing (the first refused item refuses the request with the single review's code, named in message and issues), counted as one decision for the rate limit → {reviewed, current}`))
  .add(HttpApiEndpoint.post("archive", "/v1/entities/:id/archive").setPath(Id).setPayload(ArchiveRequest).addSuccess(ArchiveResult)
    .addError(GraphErr(403)).addError(GraphErr(404)).addError(GraphErr(409))
    .annotate(OpenApi.Description, "Approval channel: archive_entity, bottom-up (has-children); same origin and the csrf token required"))
  .add(HttpApiEndpoint.post("createEntity", "/v1/structure/entities").setPayload(PersonEntityRequest).addSuccess(Json, { status: 201 })
    .addError(GraphErr(400)).addError(GraphErr(403)).addError(GraphErr(409)).addError(GraphErr(422))
    .annotate(OpenApi.Description, "Approval channel: a person creates an entity, born confirmed (the checks of entity_create; reason required); same origin and the csrf token required"))
  .add(HttpApiEndpoint.post("createLink", "/v1/structure/links").setPayload(PersonLinkRequest).addSuccess(Json, { status: 201 })
    .addError(GraphErr(400)).addError(GraphErr(403)).addError(GraphErr(409)).addError(GraphErr(422))
    .annotate(OpenApi.Description, "Approval channel: a person creates a link, born confirmed (origin human; reason required); same origin and the csrf token required"))
  .add(HttpApiEndpoint.post("closeLink", "/v1/links/:id/close").setPath(Id).setPayload(CloseLinkRequest).addSuccess(Json)
    .addError(GraphErr(400)).addError(GraphErr(403)).addError(GraphErr(404)).addError(GraphErr(409))
    .annotate(OpenApi.Description, "Approval channel: a person closes a confirmed link (valid_to = now, a review row 'close'; reason required)"))
  .add(HttpApiEndpoint.post("unarchive", "/v1/entities/:id/unarchive").setPath(Id).setPayload(UnarchiveRequest).addSuccess(Json)
    .addError(GraphErr(400)).addError(GraphErr(403)).addError(GraphErr(404)).addError(GraphErr(409)).addError(GraphErr(422))
    .annotate(OpenApi.Description, "Approval channel: a person unarchives an entity (parent-archived while its parent is archived; reason required)"))
  .add(HttpApiEndpoint.post("retract", "/v1/structure/:id/retract").setPath(Id).setPayload(RetractRequest).addSuccess(Json)
    .addError(GraphErr(404)).addError(GraphErr(409))
    .annotate(OpenApi.Description, "retract (right propose): takes back an entity or link change the approval policy adopted (id = entity id or link id), while no person decided on it (409 already-decided after that)"))
{}

export class RedactionsApi extends HttpApiGroup.make("redactions")
  .add(HttpApiEndpoint.post("preview", "/v1/redactions/preview").setPayload(RedactionPreviewRequest).addSuccess(RedactionPreviewOut)
    .addError(Err(400)).addError(Err(403))
    .annotate(OpenApi.Description, "Approval channel, right redact (a person; decide does not imply it); same origin and the csrf token required. Every place of the term in the scope (table, column, row key, count), the identifiers that keep it (kept), the rules whose text or evidence it touches, and the digest `preview` the confirmation sends back. Nothing is written. A term under 3 characters: 400 validation-failed"))
  .add(HttpApiEndpoint.post("create", "/v1/redactions").setPayload(RedactionCreate).addSuccess(RedactionCreated, { status: 201 })
    .addError(Err(400)).addError(Err(403)).addError(Err(409))
    .annotate(OpenApi.Description, "Approval channel, right redact; same origin and the csrf token required. Replaces every place of the preview by [redacted] in one transaction, with the reason (required). 409 preview-stale when the places are no longer the ones of `preview` (or the term occurs nowhere), nothing written; 409 backup-running while a backup operation runs"))
{}

export class Api extends HttpApi.make("groundnote")
  .add(SourcesApi).add(ProposalsApi).add(RulesApi).add(DecisionApi).add(StatusApi).add(ExportApi).add(SearchApi).add(EntitiesApi)
  .add(LinksApi).add(StructureApi).add(RedactionsApi)
  .annotate(OpenApi.Title, "Groundnote API")
  .annotate(OpenApi.Version, VERSION)
  .annotate(OpenApi.Transform, completeSpec(VERSION))
{}
