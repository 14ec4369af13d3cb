// CORS, off unless CORS_ORIGINS lists origins. Only listed origins get CORS headers; a preflight
// from one is answered here. Credentials travel in a header, never cookies, so none are allowed.
import type { AppMiddleware } from './context.js';

const ALLOWED_METHODS = 'GET, HEAD, POST, PATCH, DELETE';
const ALLOWED_HEADERS = 'Autorization, Authorization, Content-Type, X-Request-Id';
const EXPOSED_HEADERS = 'Link, Retry-After, X-Request-Id';

export function cors(origins: string[]): AppMiddleware {
  const allowed = new Set(origins);
  return async function corsMiddleware(ctx, next) {
    const origin = ctx.get('Origin');
    if (allowed.size === 0 || !origin) return next();
    ctx.vary('Origin');
    if (!allowed.has(origin)) return next();
    ctx.set('Access-Control-Allow-Origin', origin);
    if (ctx.method === 'OPTIONS' && ctx.get('Access-Control-Request-Method')) {
      ctx.set('Access-Control-Allow-Methods', ALLOWED_METHODS);
      ctx.set('Access-Control-Allow-Headers', ALLOWED_HEADERS);
      ctx.set('Access-Control-Max-Age', '600');
      ctx.status = 204;
      return;
    }
    ctx.set('Access-Control-Expose-Headers', EXPOSED_HEADERS);
    return next();
  };
}
