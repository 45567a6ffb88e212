// The TypeScript SDK v2 client (@modelcontextprotocol/client 2.4.0) and its Skills API
// (`ext/skills`: SkillsClient, which verifies every file against the server's entry) against a
// skills server over stdio. Bundled by esbuild for node (tests/support/browser.py), then run as
//   node ts_skills_client.bundle.mjs <python> examples/skills_server.py
// Prints one JSON object: what it listed, got, read (verified) and found in a directory.
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { SkillsClient } from "@modelcontextprotocol/client/ext/skills";

const [command, ...args] = process.argv.slice(2);
const client = new Client({ name: "ts-skills-host", version: "2.4.0" });
await client.connect(new StdioClientTransport({ command, args }));
const skills = new SkillsClient(client);
const report = { supported: skills.supported, directoryRead: skills.directoryRead };
const listing = await skills.list();
report.listed = listing.skills.map((s) => [s.uri, s.frontmatter.name, Array.isArray(s.resources) ? s.resources.length : s.resources]);
const { skill } = await skills.get("skill://acme/billing/refunds/SKILL.md");
report.got = skill.frontmatter;
const own = await skills.read(skill);
report.skillMd = { verified: own.verified, body: own.body };
const email = await skills.read(skill, "examples/email.md");
report.email = { verified: email.verified, text: email.text };
report.directory = (await skills.readDirectory("skill://pdf-processing/templates")).resources.map((r) => [r.uri, r.mimeType]);
try {
  await skills.get("skill://acme/billing/chargebacks/SKILL.md");
  report.unknown = "no error";
} catch (error) {
  report.unknown = { code: error.code, message: error.message };
}
console.log(JSON.stringify(report));
await client.close();
