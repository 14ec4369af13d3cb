// MCP: the tools of a Streamable HTTP MCP server (metadata.url, optional metadata.headers, sealed),
// each offered as `<tool name>__<mcp tool name>`; metadata.tools, when given, is an allow-list of
// the server's tool names. Connecting, listing, calling and the bounds are in ../runtime/mcp.ts.
// stdio servers are not offered: a service that starts processes for its users is a hole.
import * as v from 'valibot';
import { strictWebTargetSchema } from '../runtime/http-call.js';
import { mcpTools } from '../runtime/mcp.js';
import { defineKind } from './kind.js';

const SERVER = 'a Streamable HTTP MCP server';

export const mcp = defineKind({
  type: 'MCP',
  label: 'the tools of an MCP server',
  metadataSchema: strictWebTargetSchema(SERVER, {
    tools: v.nullish(
      v.pipe(
        v.array(
          v.pipe(v.string('must be a tool name'), v.maxLength(200, 'must be at most 200 characters')),
          'must be a list of tool names',
        ),
        v.maxLength(256, 'must list at most 256 tools'),
      ),
    ),
  }),
  secretFields: ['headers'],
  showsHasHeaders: true,
  describe: () => 'Calls a tool of an MCP server.',
  build: ({ tool, name, http, signal, deadline }) => mcpTools(tool, name, http, signal, deadline),
});
