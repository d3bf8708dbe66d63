/**
 * Corpora of the secret scan (invariant 12): fake but well-formed secrets, each with the kind
 * the scan must name, and near-misses that must pass. The random parts are drawn from a fixed
 * seed so the files hold no real-looking key verbatim, and every run sees the same values.
 */
import type { SecretKind } from "../../src/security/secrets.js"

let state = 0x5eed
const next = (): number => {
  state = (Math.imul(state, 1103515245) + 12345) >>> 0
  return state >>> 8
}
const from = (alphabet: string, n: number): string =>
  Array.from({ length: n }, () => alphabet[next() % alphabet.length]).join("")

const UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
const LOWER = "abcdefghijklmnopqrstuvwxyz"
const DIGITS = "0123456789"
const ALNUM = UPPER + LOWER + DIGITS
const HEX = "0123456789abcdef"
const B64 = ALNUM + "+/"
const B64URL = ALNUM + "-_"
/** Random alphanumerics that hold upper, lower and digit (a real key almost always does). */
const alnum = (n: number): string => `A${from(ALNUM, n - 3)}z7`
const b64 = (n: number): string => `Q${from(B64, n - 3)}k9`
const b64url = (n: number): string => `R${from(B64URL, n - 3)}m3`
const hex = (n: number): string => `a${from(HEX, n - 2)}9`
const upperNum = (n: number): string => `Q${from(UPPER + DIGITS, n - 2)}7`

const pem = (label: string): string =>
  `-----BEGIN ${label}-----\n${b64(64)}\n${b64(64)}\n${b64(40)}==\n-----END ${label}-----`
const jwt = (): string =>
  `eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiI${b64url(40)}.${b64url(43)}`

export interface SecretSample {
  readonly kind: SecretKind
  readonly text: string
}

export const SECRETS: ReadonlyArray<SecretSample> = [
  // private keys
  { kind: "private-key", text: pem("RSA PRIVATE KEY") },
  { kind: "private-key", text: pem("EC PRIVATE KEY") },
  { kind: "private-key", text: pem("PRIVATE KEY") },
  { kind: "private-key", text: pem("ENCRYPTED PRIVATE KEY") },
  { kind: "private-key", text: pem("DSA PRIVATE KEY") },
  { kind: "private-key", text: pem("OPENSSH PRIVATE KEY") },
  { kind: "private-key", text: `-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBF${b64(60)}\n=${b64(4)}\n-----END PGP PRIVATE KEY BLOCK-----` },
  { kind: "private-key", text: `"private_key": "-----BEGIN PRIVATE KEY-----\\nMIIEvQ${b64(60)}\\n-----END PRIVATE KEY-----\\n"` },
  { kind: "private-key", text: `PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nPrivate-Lines: 1\n${b64(44)}` },
  { kind: "private-key", text: `AGE-SECRET-KEY-1${from(UPPER + DIGITS, 58)}` },
  // AWS
  { kind: "aws-access-key", text: `AKIA${upperNum(16)}` },
  { kind: "aws-access-key", text: `ASIA${upperNum(16)}` },
  { kind: "aws-access-key", text: `aws_access_key_id = AKIA${upperNum(16)}` },
  { kind: "aws-access-key", text: `Access key ID: AKIA${upperNum(16)}` },
  { kind: "aws-secret-key", text: `aws_secret_access_key = ${alnum(20)}/${alnum(19)}` },
  { kind: "aws-secret-key", text: `AWS Secret Access Key: ${alnum(30)}+${alnum(9)}` },
  { kind: "aws-secret-key", text: `"SecretAccessKey": "${alnum(40)}"` },
  { kind: "aws-secret-key", text: `Der Secret Key lautet ${alnum(25)}/${alnum(14)}` },
  // GitHub, GitLab
  { kind: "github-token", text: `ghp_${alnum(36)}` },
  { kind: "github-token", text: `gho_${alnum(36)}` },
  { kind: "github-token", text: `ghs_${alnum(36)}` },
  { kind: "github-token", text: `ghu_${alnum(36)}` },
  { kind: "github-token", text: `GITHUB_TOKEN=ghr_${alnum(36)}` },
  { kind: "github-token", text: `github_pat_11${upperNum(20)}_${alnum(59)}` },
  { kind: "gitlab-token", text: `glpat-${b64url(20)}` },
  { kind: "gitlab-token", text: `Deploy-Token: gldt-${b64url(20)}` },
  { kind: "gitlab-token", text: `glrt-${b64url(20)}` },
  // Slack
  { kind: "slack-token", text: `xoxb-${from(DIGITS, 12)}-${from(DIGITS, 13)}-${alnum(24)}` },
  { kind: "slack-token", text: `xoxp-${from(DIGITS, 12)}-${from(DIGITS, 12)}-${from(DIGITS, 13)}-${hex(32)}` },
  { kind: "slack-token", text: `xoxa-2-${from(DIGITS, 12)}-${alnum(30)}` },
  { kind: "slack-token", text: `xapp-1-A${upperNum(10)}-${from(DIGITS, 13)}-${hex(64)}` },
  { kind: "slack-token", text: `https://hooks.slack.com/services/T${upperNum(8)}/B${upperNum(10)}/${alnum(24)}` },
  // Stripe
  { kind: "stripe-key", text: `sk_live_${alnum(24)}` },
  { kind: "stripe-key", text: `rk_live_${alnum(99)}` },
  { kind: "stripe-key", text: `STRIPE_SECRET_KEY=sk_test_${alnum(24)}` },
  { kind: "stripe-key", text: `whsec_${alnum(32)}` },
  // Google
  { kind: "google-api-key", text: `AIza${b64url(35)}` },
  { kind: "google-api-key", text: `"client_secret": "GOCSPX-${b64url(28)}"` },
  { kind: "google-api-key", text: `ya29.a0${b64url(60)}` },
  // OpenAI, Anthropic
  { kind: "openai-key", text: `sk-proj-${b64url(120)}` },
  { kind: "openai-key", text: `sk-${alnum(20)}T3BlbkFJ${alnum(20)}` },
  { kind: "openai-key", text: `OPENAI_API_KEY=sk-svcacct-${b64url(80)}` },
  { kind: "anthropic-key", text: `sk-ant-api03-${b64url(93)}AA` },
  { kind: "anthropic-key", text: `ANTHROPIC_API_KEY="sk-ant-admin01-${b64url(93)}AA"` },
  // Azure
  { kind: "azure-key", text: `DefaultEndpointsProtocol=https;AccountName=acmestorage;AccountKey=${b64(86)}==;EndpointSuffix=core.windows.net` },
  { kind: "azure-key", text: `Endpoint=sb://acme.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=${b64(43)}=` },
  { kind: "azure-key", text: `https://acmestorage.blob.core.windows.net/belege?sv=2022-11-02&ss=b&srt=co&sp=rl&se=2026-12-31T00:00:00Z&sig=${alnum(43)}%3D` },
  { kind: "azure-key", text: `Client Secret: ${alnum(3)}8Q~${b64url(34)}` },
  { kind: "azure-key", text: `PrimaryKey=${b64(43)}=` },
  // npm, SendGrid, Twilio
  { kind: "npm-token", text: `npm_${alnum(36)}` },
  { kind: "npm-token", text: `//registry.example.com/:_authToken=npm_${alnum(36)}` },
  { kind: "sendgrid-key", text: `SG.${b64url(22)}.${b64url(43)}` },
  { kind: "sendgrid-key", text: `SENDGRID_API_KEY=SG.${b64url(22)}.${b64url(43)}` },
  { kind: "twilio-key", text: `SK${hex(32)}` },
  { kind: "twilio-key", text: `Twilio API Key SID: SK${hex(32)}` },
  // other vendors
  { kind: "api-key", text: `key-${hex(32)}` },
  { kind: "api-key", text: `shpat_${hex(32)}` },
  { kind: "api-key", text: `hf_${from(UPPER + LOWER, 34)}` },
  { kind: "api-key", text: `pypi-AgEIcHlwaS5vcmc${b64url(70)}` },
  { kind: "api-key", text: `dckr_pat_${b64url(27)}` },
  { kind: "api-key", text: `dop_v1_${hex(64)}` },
  { kind: "api-key", text: `ATATT3${b64url(180)}` },
  { kind: "api-key", text: `PMAK-${hex(24)}-${hex(34)}` },
  { kind: "api-key", text: `lin_api_${alnum(40)}` },
  { kind: "api-key", text: `hvs.${b64url(95)}` },
  { kind: "api-key", text: `dapi${hex(32)}` },
  { kind: "api-key", text: `${from(DIGITS, 10)}:AA${b64url(33)}` },
  { kind: "api-key", text: `glsa_${alnum(32)}_${hex(8)}` },
  { kind: "api-key", text: `${hex(32)}-us21` },
  // Groundnote, JWT, bearer
  { kind: "groundnote-token", text: `gn_${b64url(43)}` },
  { kind: "groundnote-token", text: `Authorization: Bearer gn_${b64url(43)}` },
  { kind: "groundnote-token", text: `GROUNDNOTE_TOKEN="gn_${b64url(43)}"` },
  { kind: "jwt", text: jwt() },
  { kind: "jwt", text: `Authorization: Bearer ${jwt()}` },
  { kind: "jwt", text: `id_token=${jwt()}` },
  { kind: "jwt", text: `Cookie: session=${jwt()}` },
  { kind: "bearer-token", text: `Authorization: Bearer ${alnum(40)}` },
  { kind: "bearer-token", text: `curl -H "Authorization: Bearer ${b64url(32)}" https://api.example.com/v1/orders` },
  { kind: "bearer-token", text: `bearer ${hex(40)}` },
  // connection strings
  { kind: "connection-string", text: `postgres://app:${alnum(16)}@db.internal:5432/groundnote` },
  { kind: "connection-string", text: `postgresql://report_user:Winter2025!@10.0.3.14/erp?sslmode=require` },
  { kind: "connection-string", text: `mongodb+srv://admin:${alnum(14)}@cluster0.abcde.mongodb.net/shop` },
  { kind: "connection-string", text: `mysql://root:Hakenleiste%2342@localhost:3306/lager` },
  { kind: "connection-string", text: `redis://:${alnum(24)}@cache.internal:6379/0` },
  { kind: "connection-string", text: `amqps://orders:${alnum(18)}@mq.example.com/vhost` },
  { kind: "connection-string", text: `https://maria:Sommer2024@portal.lieferant.example/login` },
  { kind: "connection-string", text: `Server=sql01.acme.local;Database=CRM;User ID=sa;Password=${alnum(12)}!;` },
  { kind: "connection-string", text: `Data Source=erp-db;Initial Catalog=Lager;User Id=lager_app;Pwd=Lager#2024;` },
  // passwords, PINs, codes
  { kind: "password", text: "Passwort: Sommer2024!" },
  { kind: "password", text: "Das Passwort für das Lieferantenportal ist Hakenleiste#7" },
  { kind: "password", text: "Kennwort: Bx7!pq2Z" },
  { kind: "password", text: "Das Kennwort lautet Winter-2025" },
  { kind: "password", text: "PIN: 4711" },
  { kind: "password", text: "Die PIN lautet 0815" },
  { kind: "password", text: "Geheimzahl: 9317" },
  { kind: "password", text: "password=hunter2!" },
  { kind: "password", text: "DB_PASSWORD=Tr0ub4dor&3" },
  { kind: "password", text: `"password": "c0rrect-h0rse"` },
  { kind: "password", text: "pwd: Qw3rtz!x" },
  { kind: "password", text: "PW: Maerz2025!" },
  { kind: "password", text: "Zugangscode: 7788A" },
  { kind: "password", text: "Der Türcode ist 4821" },
  { kind: "password", text: "The door code is 7391" },
  { kind: "password", text: "Alarmcode: 2468" },
  { kind: "password", text: "The password for the supplier portal is Blue-Horse-42" },
  { kind: "password", text: "Authorization: Basic bWFyaWEuc2NobWlkdDpTb21tZXIyMDI0IQ==" },
  { kind: "password", text: "passphrase: blue-Horse-42-battery" },
  { kind: "password", text: "smtp.pass=Mail2024$ecure" },
  // high-entropy values after a secret label
  { kind: "high-entropy", text: `api_key = '${alnum(32)}'` },
  { kind: "high-entropy", text: `API-Key: ${alnum(28)}` },
  { kind: "high-entropy", text: `X-API-Key: ${hex(40)}` },
  { kind: "high-entropy", text: `client_secret: ${b64url(36)}` },
  { kind: "high-entropy", text: `Token: ${alnum(24)}` },
  { kind: "high-entropy", text: `Der API-Schlüssel lautet ${alnum(30)}` },
  { kind: "high-entropy", text: `Zugangsschlüssel: ${b64(32)}` },
  { kind: "high-entropy", text: `secret=${alnum(20)}` },
  { kind: "high-entropy", text: `The webhook secret is ${alnum(32)}` },
  { kind: "high-entropy", text: `Twilio auth token: ${hex(32)}` },
  { kind: "high-entropy", text: `"access_token": "${b64url(48)}"` },
  { kind: "high-entropy", text: `Lizenzschlüssel: ${from(UPPER + DIGITS, 5)}-${from(UPPER + DIGITS, 5)}-${from(UPPER + DIGITS, 5)}-${from(UPPER + DIGITS, 5)}` },
  // a random value near a secret word, whatever separates them (no `=` or `:` right after the word)
  { kind: "aws-secret-key", text: `aws secret key ${alnum(20)}/${alnum(19)}` },
  { kind: "aws-secret-key", text: `AWS Secret Access Key ${alnum(30)}+${alnum(9)}` },
  { kind: "aws-secret-key", text: `aws_secret_access_key ${alnum(40)}` },
  { kind: "high-entropy", text: `API key ${alnum(32)}` },
  { kind: "high-entropy", text: `the new api token for the shop -> ${b64url(40)}` },
  { kind: "high-entropy", text: `Our Stripe webhook secret ${alnum(28)} (rotated in May)` },
  { kind: "high-entropy", text: `Secret für die Lager-Schnittstelle – ${b64url(36)}` },
  { kind: "high-entropy", text: `Der AWS-Schlüssel für das Lager-Konto ist ${alnum(40)}` },
  { kind: "high-entropy", text: `Kennwort des Admin-Kontos ${alnum(20)}` },
  { kind: "high-entropy", text: `Passwort (neu) „${alnum(24)}“` },
  { kind: "high-entropy", text: `Token\n${b64url(48)}` },
  { kind: "high-entropy", text: `Here is the key to the reporting API:\n\n${alnum(40)}` },
  { kind: "high-entropy", text: `${hex(40)} ist der API-Schlüssel.` },
  { kind: "high-entropy", text: `${alnum(40)} (AWS secret key)` },
  { kind: "high-entropy", text: `${b64url(32)} is the password.` }
]

/** Business text around a secret ({S}); none of them holds a secret itself. */
export const TEMPLATES: ReadonlyArray<string> = [
  "{S}",
  "Hallo Maria,\nanbei die Zugangsdaten für das Lieferantenportal:\n{S}\nViele Grüße\nJonas",
  "Kurze Info aus dem Meeting mit der Hakenleiste GmbH: {S} – bitte nicht weitergeben.",
  "Please find the credentials for the new ERP interface below.\n\n{S}\n\nBest regards,\nTom (IT)",
  "Ab Montag gilt für die Schnittstelle zum Lager: {S}\nDie Lieferzeit bleibt bei 14 Tagen.",
  "Note from the call with the supplier (12 March): {S}\nDelivery terms unchanged, net 30 days."
]

/** Fields a proposal or a source brings; the scan is called with each name. */
export const FIELDS: ReadonlyArray<string> = [
  "statement", "source.quote", "keywords[0]", "speaker", "source.text", "segments[2].text", "attachments[0].filename"
]

/** Texts that look a little like secrets and must pass. */
export const NEAR_MISSES: ReadonlyArray<string> = [
  // order numbers, invoices, articles
  "Bestellung 4500012345 vom 12.03.2024 über 240 Stück Hakenleiste HL-400.",
  "Auftragsnummer: AB-2024-00017, Lieferung in KW 14.",
  "Order no. PO-2024-118734 was shipped on 2024-03-12.",
  "Rechnungsnummer RE-2024-03-0042, fällig am 30.04.2024.",
  "Lieferschein LS 2024/118 liegt der Sendung bei.",
  "Charge 24A117, MHD 31.12.2025, Lagerplatz A-07-3.",
  "EAN 4006381333931 ist im Shop hinterlegt.",
  "Die Kundennummer K-100234 gehört zur Hakenleiste AG.",
  "Ticket JIRA-4711: Anmeldung im Portal schlägt fehl.",
  "Tracking: 1Z999AA10123456784 (UPS Standard).",
  "Sendungsnummer 00340434161094042557, Zustellung morgen.",
  "Chargennummer: A1B2C3D4E5 bitte auf dem Etikett angeben.",
  "Seriennummer SN 7F3K-22Q9-XP41 steht auf der Rückseite.",
  "Route 66, Palette 12/40, Stellplatz B-11-2.",
  // bank details with a label
  "IBAN: DE89 3704 0044 0532 0130 00, BIC: COBADEFFXXX",
  "Bankverbindung: IBAN DE02120300000000202051 bei der Sparkasse Köln.",
  "Kontonummer 0532013000, BLZ 37040044, Verwendungszweck RE-2024-0042.",
  "USt-IdNr. DE123456789, Steuernummer 21/815/08150.",
  "VAT ID: GB123456789, company number 01234567.",
  "Zahlen Sie bitte per Überweisung, Verwendungszweck RE-2024-0042.",
  // SKUs, colours
  "SKU HL-400-BLK-XL ist ausverkauft.",
  "Artikelnummer: 100-2244-BLK-M, Farbe schwarz.",
  "Farbe #1A2B3C für Überschriften, #FF5733 für Warnungen.",
  "Use colour #0f172a for the header and #e2e8f0 for borders.",
  "Corporate colours: #004B87, #F2A900 and #FFFFFF.",
  // German compound words and ordinary sentences about passwords and keys
  "Die Passwortrichtlinie verlangt mindestens 12 Zeichen.",
  "The password policy requires 12 characters.",
  "Schlüsselübergabe für Halle 3 ist am Freitag um 10 Uhr.",
  "Der Schlüssel für das Lager liegt beim Pförtner.",
  "Kostenstellenschlüssel 4711 gilt für alle Reisekosten.",
  "Verteilerschlüssel: 60/40 zwischen Vertrieb und Einkauf.",
  "Das Passwort ist abgelaufen, bitte über das Portal zurücksetzen.",
  "Passwort vergessen? Bitte an die IT wenden.",
  "Passwort: siehe separate Mail.",
  "Password: will be sent by SMS.",
  "Kennwort: wird telefonisch mitgeteilt.",
  "Kennwortänderung alle 90 Tage.",
  "Passwords must be rotated every 90 days.",
  "Passwort-Reset: 2024-05-01",
  "Das neue Passwort muss mindestens eine Ziffer enthalten.",
  "Please never send a password by mail.",
  "Die Passwortmanager-Lizenz läuft im Mai aus.",
  "Sicherheitsschlüssel (YubiKey) für alle Admins bis Juni.",
  "Zwei-Faktor-Authentifizierung ist ab April Pflicht.",
  "Authentication via SSO only; no local accounts.",
  "API-Schlüssel bitte nur über den Passwortmanager teilen.",
  "The API key is stored in the vault, never in mails.",
  "The deploy key was rotated yesterday.",
  "Der Zugangscode für das WLAN hängt im Besprechungsraum aus.",
  "Zugangscode: beim Empfang erfragen.",
  "Türcode ändern wir monatlich.",
  "Die Alarmanlage wird um 20 Uhr scharf geschaltet.",
  "Die Geheimhaltungsvereinbarung (NDA) ist unterschrieben.",
  "Secret Santa: Budget 20 EUR pro Person.",
  "The access key card for building 2 is at reception.",
  "Key Account: Müller GmbH, zuständig Frau Schmidt.",
  "Key: Lieferantennummer",
  "Schlüssel: Fach 12 im Empfang",
  "Primary key: customer_id",
  "public_key: see attachment",
  "key=value pairs are separated by semicolons.",
  "Access token lifetime is 15 minutes.",
  "Token: 3 Stück pro Teilnehmer für die Kantine.",
  "The token system for the canteen starts in May.",
  "Ein Token-Bucket begrenzt die Anfragen auf 60 pro Minute.",
  "Token: abgelaufen",
  "Secret: none",
  "client_secret: (liegt im Tresor)",
  // placeholders and masked values
  "password=${DB_PASSWORD}",
  "password: ********",
  "Passwort: <bitte eintragen>",
  "Kennwort: ***",
  "PIN: ****",
  "postgres://app:${DB_PASSWORD}@db.internal:5432/groundnote",
  "mysql://user:password@localhost:3306/test",
  "api_key: YOUR_API_KEY",
  // PINs and pins
  "PIN-Eingabe am Terminal ist Pflicht.",
  "Pin 3 des Steckers ist Masse.",
  "Die PIN wurde per Post verschickt.",
  "Der PIN-Brief kommt morgen.",
  "password_policy=strict",
  "token_type=bearer",
  "key_id: 2024-03",
  // UUIDs and commit hashes as ids
  "Kunden-ID 550e8400-e29b-41d4-a716-446655440000 ist doppelt angelegt.",
  "Request id 9b2f6c1e-4d3a-4f5b-8c7d-1e2f3a4b5c6d failed twice.",
  "UUID: 123e4567-e89b-12d3-a456-426614174000",
  "Fixed in commit 3f2a9c1d0e4b5a6978c1d2e3f4a5b6c7d8e9f0a1 last week.",
  "Siehe Commit a1b2c3d im Repo.",
  "Hash der Datei (SHA-256): 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
  "Checksum: d41d8cd98f00b204e9800998ecf8427e",
  // prices, dates, phone numbers
  "Preis: 12,50 EUR netto, ab 100 Stück 11,90 EUR.",
  "The unit price is $14.99 excluding VAT.",
  "Telefon: +49 221 12345678, Fax: +49 221 12345679",
  "Call me at +1 (415) 555-0134.",
  "Termin: 12.03.2024, 14:00–15:30 Uhr",
  "Meeting on 2024-03-12T09:15:00Z in room B2.014.",
  "Version 2.14.3 is deployed since Monday.",
  "Build 20240312.4 ist fehlerhaft.",
  "Lizenz: 25 Nutzer, gültig bis 2025-12-31",
  "API rate limit: 60 requests/minute.",
  // bearer, basic, links, hosts
  "Bearer of this letter is authorised to collect the goods.",
  "Der Überbringer (bearer) dieses Schreibens darf die Ware abholen.",
  "Basic plan costs 9 EUR per month.",
  "Basic Hakenleiste model is discontinued.",
  "https://www.example.com/produkte/hakenleiste?farbe=schwarz&groesse=xl",
  "mailto:vertrieb@acme.example",
  "maria.schmidt@acme.example wrote on 12.03.:",
  "Server: srv-app-01, Port 8443",
  "Host=db01;Database=crm;Integrated Security=true",
  "postgres://db.internal:5432/groundnote",
  "https://maria@portal.example.com/login",
  "Login: maria.schmidt",
  "Benutzername: m.schmidt",
  "Username: jdoe, role: editor",
  "Signatur: Maria Schmidt, Vertrieb",
  "The signature on page 3 is missing.",
  "Auth: SSO",
  // codes
  "Gutscheincode SOMMER24 gilt bis 31.08.",
  "Rabattcode: WELCOME10",
  "Promo code: SPRING-2024-XYZ",
  // talk about secret formats, not secrets
  "AKIA is the prefix of AWS access key ids.",
  "ghp_ tokens must never be pasted here.",
  "Stripe keys start with sk_live_ in production.",
  "JWT-based login was introduced in version 3.",
  "ssh-rsa public key is attached (id_rsa.pub).",
  "-----BEGIN PUBLIC KEY----- is the header of a public key.",
  "-----BEGIN CERTIFICATE----- starts the certificate.",
  "SharedAccessKeyName=RootManageSharedAccessKey",
  "Unsere geheime Zutat bleibt geheim.",
  // secret words in ordinary business text, ids and hashes near them or without them
  "Key Account Manager Frau Schmidt betreut ab sofort den Auftrag AB2024X7Q9-00017-LK.",
  "Our key account manager confirmed order PO-2024-118734 and shipment 1Z999AA10123456784.",
  "Schlüsselkunde Müller GmbH, Kundennummer K-100234, Lagerplatz-A-07-3-B11.",
  "Die Schlüsselkunden bekommen ab Mai 3 % Skonto auf Bestellung 4500012345.",
  "Der Schlüssel für Halle 3 wurde mit Lieferschein LS-2024-0118-HL400 übergeben.",
  "Key figures for Q3: revenue up 12 %, see report RPT-2024-Q3-7F3K22Q9.",
  "The key question is whether SN-7F3K-22Q9-XP41 is still under warranty.",
  "API key rotation is tracked in commit 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b.",
  "Passwort-Hinweis: siehe Ticket JIRA-4711, Commit 3f2a9c1d0e4b5a6978c1d2e3f4a5b6c7d8e9f0a1.",
  "Token: abgelaufen, Checksum d41d8cd98f00b204e9800998ecf8427e",
  "The public key AAAAC3NzaC1lZDI1NTE5AAAAIHk7Q2fXmP9rT4vLw8sNb3cZa1eYu6oJd5gRt0hWq2Ki is attached.",
  "SSH-Key ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHk7Q2fXmP9rT4vLw8sNb3cZa1eYu6oJd5gRt0hWq2Ki maria@laptop",
  "Der Token-Automat in der Kantine hat die Seriennummer TKA-2024-88Q1-7731.",
  "Die Lieferung 00340434161094042557 enthält den Ersatzschlüssel für Tor 2.",
  "Hash der Rechnung: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08, Passwort bleibt unverändert.",
  "Order 9b2f6c1e-4d3a-4f5b-8c7d-1e2f3a4b5c6d: key dates are 12.03. and 15.04."
]
