-- An agent's model server and its key get columns of their own: the URL is shown in answers
-- (`llm.baseUrl`), the key stays sealed and answers only say whether one is set (`llm.hasApiKey`).
-- Keys stored among the other llm keys by earlier versions stay there, unused: set `llm.apiKey` again.
ALTER TABLE agents ADD COLUMN llm_base_url TEXT;
ALTER TABLE agents ADD COLUMN llm_api_key TEXT;
