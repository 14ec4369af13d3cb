-- The document of each agent's oldest agent-document link, kept on the agent row by two triggers,
-- so that reading agents (one, or a page of a million) shows it without searching the links for
-- every agent. No foreign key: deleting a document deletes its links, and their trigger sets the
-- next one (a SET NULL would need an index of its own to find the agents).
ALTER TABLE agents ADD COLUMN linked_document_id TEXT;
UPDATE agents
   SET linked_document_id = (SELECT l.document_id FROM agent_documents l WHERE l.agent_id = agents.id ORDER BY l.seq LIMIT 1)
 WHERE id IN (SELECT agent_id FROM agent_documents);
CREATE TRIGGER agent_documents_linked AFTER INSERT ON agent_documents BEGIN
  UPDATE agents SET linked_document_id = (SELECT l.document_id FROM agent_documents l WHERE l.agent_id = new.agent_id ORDER BY l.seq LIMIT 1)
   WHERE id = new.agent_id;
END;
CREATE TRIGGER agent_documents_unlinked AFTER DELETE ON agent_documents BEGIN
  UPDATE agents SET linked_document_id = (SELECT l.document_id FROM agent_documents l WHERE l.agent_id = old.agent_id ORDER BY l.seq LIMIT 1)
   WHERE id = old.agent_id;
END;
