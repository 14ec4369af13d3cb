// The JSON shape of a tag (also nested in agents' `tags`).
import type { Tag } from './schema.js';
import type { TagRow } from './store.js';

export function presentTag(tag: TagRow): Tag {
  return { id: tag.id, userId: tag.userId, name: tag.name, color: tag.color, createdAt: tag.createdAt, updatedAt: tag.updatedAt };
}
