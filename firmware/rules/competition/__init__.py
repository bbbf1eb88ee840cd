"""中国竞技麻将 (Chinese competition mahjong): legal wins, fans, extra points, settlement."""
