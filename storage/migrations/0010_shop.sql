-- The shop directory (DESIGN §7 "Shop"): a merchant's own choice to be listed, and the line
-- the directory shows under its name. Listed only while its live payout address is verified
-- (checked when the directory is read, never copied here).
ALTER TABLE merchants
  ADD COLUMN shop_listed boolean NOT NULL DEFAULT false,
  ADD COLUMN shop_description text NOT NULL DEFAULT '' CHECK (length(shop_description) <= 300);
