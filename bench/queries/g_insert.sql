-- (g) insert one article, return { id title } (Hasura's insert_<table> with `returning`).
-- $1 author_id, $2 owner_id, $3 title, $4 body, $5 rating, $6 published, $7 created_at
-- The runner inserts rows no read scenario can see (author 9999, owner 999, unpublished,
-- created 2030) and deletes every article with id > 100000 before and after a run.
WITH ins AS (
  INSERT INTO articles (author_id, owner_id, title, body, rating, published, created_at)
  VALUES ($1::integer, $2::integer, $3::text, $4::text, $5::integer, $6::boolean, $7::timestamptz)
  RETURNING id, title
)
SELECT json_build_object('insert_articles', json_build_object('returning', coalesce((
  SELECT json_agg(r) FROM (SELECT ins.id, ins.title FROM ins) r
), '[]'::json))) AS data
